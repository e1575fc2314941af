/// Opens the frames of one direction (docs/continuation.md, section 10.4), in order, with the counter
/// implicit: frame n opens only at counter n, so a replayed, dropped, reordered or foreign frame fails.
///
/// Feed it bytes as they arrive (`append`) and take frames (`next`), like swift-nio's
/// `ByteToMessageDecoder`: a `StreamFrameDecoder` cuts them. The first frame must be the peer's hello,
/// the last its end frame; `finish` says whether the bytes stopped there. After its first failure it
/// throws that same error for everything, whatever comes next.
public struct StreamOpener: Sendable {
    private enum State: Sendable, Equatable { case awaitingHello, open, ended, failed(StreamError) }

    private let key: StreamDirectionKey
    private var decoder = StreamFrameDecoder()
    /// The counter of the next frame.
    private(set) var counter: UInt64 = 0
    private var state = State.awaitingHello

    /// Opens with `key`, from counter 0.
    public init(key: StreamDirectionKey) {
        self.key = key
    }

    /// An opener whose hello opened and whose next frame is `counter` (for tests of the counter's end).
    init(key: StreamDirectionKey, resumingAt counter: UInt64) {
        self.key = key
        self.counter = counter
        state = .open
    }

    /// The direction this opener's frames come from.
    public var direction: StreamDirection { key.direction }

    /// Whether the peer's hello opened and no failure happened since.
    public var isEstablished: Bool { state == .open || state == .ended }

    /// Whether the peer's end frame opened.
    public var isEnded: Bool { state == .ended }

    /// Adds received bytes, in any pieces.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        decoder.append(bytes)
    }

    /// The next frame of the bytes appended; nil until one is whole, and after the end frame.
    /// - Throws: `StreamError`; then this opener is failed for good.
    public mutating func next() throws(StreamError) -> StreamFrame? {
        switch state {
        case .failed(let error): throw error
        case .ended:
            guard decoder.bufferedByteCount == 0 else { throw fail(.unexpectedFrame("bytes after the end frame")) }
            return nil
        case .awaitingHello, .open: break
        }
        let frame: [UInt8]?
        do { frame = try decoder.nextFrame() } catch { throw fail(error) }
        guard let frame else { return nil }
        return try open(frame)
    }

    /// Opens one whole frame, length field included, cut by a `StreamFrameDecoder` of its own.
    /// - Throws: `StreamError`; then this opener is failed for good.
    public mutating func open(_ frame: [UInt8]) throws(StreamError) -> StreamFrame {
        switch state {
        case .failed(let error): throw error
        case .ended: throw fail(.unexpectedFrame("a frame after the end frame"))
        case .awaitingHello, .open: break
        }
        guard frame.count >= StreamFormat.headerLength else { throw fail(.unexpectedFrame("\(frame.count) bytes")) }
        let length: Int
        do { length = try StreamFrameDecoder.sealedLength(frame[0], frame[1]) } catch { throw fail(error) }
        guard frame.count == StreamFormat.headerLength + length else {
            throw fail(.unexpectedFrame("\(frame.count) bytes for a length field of \(length)"))
        }
        guard counter < UInt64.max else { throw fail(.counterExhausted) }
        guard let plaintext = key.open(frame, counter: counter) else {
            throw fail(state == .awaitingHello ? .handshakeFailed : .authenticationFailed(frame: counter))
        }
        counter += 1
        let body = plaintext.dropFirst()
        switch (state, StreamFrameType(rawValue: plaintext[0])) {
        case (.awaitingHello, .hello) where body.isEmpty:
            state = .open
            return .hello
        case (.awaitingHello, _):
            throw fail(.unexpectedFrame("the first frame is not a hello"))
        case (_, .hello):
            throw fail(.unexpectedFrame("a second hello"))
        case (_, .data) where !body.isEmpty:
            return .data(Array(body))
        case (_, .end) where body.isEmpty:
            state = .ended
            return .end
        case (_, .abort) where body.count == 1:
            throw fail(.peerAborted(StreamAbortReason(code: body[body.startIndex])))
        case (_, let type?):
            throw fail(.unexpectedFrame("\(type) frame with a body of \(body.count) bytes"))
        case (_, nil):
            throw fail(.unexpectedFrame("frame type 0x\(Hex.encode(plaintext[0], width: 2))"))
        }
    }

    /// The bytes of this direction ended (the link closed).
    /// - Throws: `StreamError.truncated` unless the end frame opened and nothing followed it; the
    ///   earlier failure if there was one.
    public mutating func finish() throws(StreamError) {
        switch state {
        case .failed(let error): throw error
        case .ended:
            guard decoder.bufferedByteCount == 0 else { throw fail(.unexpectedFrame("bytes after the end frame")) }
        case .awaitingHello, .open: throw fail(.truncated)
        }
    }

    private mutating func fail(_ error: StreamError) -> StreamError {
        state = .failed(error)
        return error
    }
}
