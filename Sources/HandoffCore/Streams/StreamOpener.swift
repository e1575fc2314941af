/// Opens the frames of one direction (docs/continuation.md, section 10.4), in order, with the counter
/// implicit: frame n opens only at counter n, so a replayed, dropped, modified or foreign frame fails.
///
/// Feed it bytes as they arrive (`append`) and take frames (`next`), like swift-nio's
/// `ByteToMessageDecoder`: a `StreamFrameDecoder` cuts them. Or feed it the channel's SDUs
/// (`receive(unit:)`): an SDU that is exactly one frame may then come ahead of its turn, as Linux 6.1
/// delivers them when its receive queue overflows, and is held until the frames before it opened
/// (section 10.5, "Frames out of order"). The first frame must be the peer's hello, the last its end
/// frame; `finish` says whether the bytes stopped there. After its first failure it throws that same
/// error for everything, whatever comes next.
public struct StreamOpener: Sendable {
    private enum State: Sendable, Equatable { case awaitingHello, open, ended, failed(StreamError) }

    private let key: StreamDirectionKey
    private var decoder = StreamFrameDecoder()
    /// The counter of the next frame.
    private(set) var counter: UInt64 = 0
    private var state = State.awaitingHello
    /// Frames that opened ahead of their turn, by counter: their plaintexts, waiting for the frames before.
    private var held: [UInt64: [UInt8]] = [:]
    /// How many frames opened ahead of their turn and were held (for the log).
    public private(set) var framesReordered = 0

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
        return try deliver(plaintext)
    }

    /// Takes one SDU of the channel and gives the frames that opened with it, in order (none while the
    /// SDU waits for the frames before it, several when it filled a gap).
    ///
    /// Once the peer's hello opened, an SDU that holds exactly one whole frame, with no partial frame
    /// before it, is opened at the counter or else at each of the next `StreamFormat.reorderWindow - 1`
    /// counters that have not opened yet; one that opens ahead is held until the frames before it opened.
    /// Any other SDU is bytes of the stream, in order, as `append` takes them.
    /// - Throws: `StreamError`; then this opener is failed for good. A frame that opens at none of those
    ///   counters is `authenticationFailed` with the number of the frame still awaited.
    public mutating func receive(unit: some Collection<UInt8>) throws(StreamError) -> [StreamFrame] {
        if case .failed(let error) = state { throw error }
        let bytes = Array(unit)
        if state == .open, decoder.bufferedByteCount == 0, let frame = Self.wholeFrame(bytes) {
            return try openInWindow(frame)
        }
        decoder.append(bytes)
        var frames: [StreamFrame] = []
        while let frame = try next() {
            frames.append(frame)
            frames += try deliverHeld()
        }
        return frames
    }

    /// `bytes` when they are exactly one frame by its length field; nil otherwise.
    private static func wholeFrame(_ bytes: [UInt8]) -> [UInt8]? {
        guard bytes.count >= StreamFormat.headerLength,
            let length = try? StreamFrameDecoder.sealedLength(bytes[0], bytes[1]),
            bytes.count == StreamFormat.headerLength + length
        else { return nil }
        return bytes
    }

    /// Opens a whole frame at the counter, or holds it if it opens at a later counter of the window.
    private mutating func openInWindow(_ frame: [UInt8]) throws(StreamError) -> [StreamFrame] {
        guard counter < UInt64.max else { throw fail(.counterExhausted) }
        if let plaintext = key.open(frame, counter: counter) {
            var frames = [try deliver(plaintext)]
            frames += try deliverHeld()
            return frames
        }
        let last = counter + UInt64(min(UInt64(StreamFormat.reorderWindow - 1), UInt64.max - 1 - counter))
        var later = counter + 1
        while later <= last {
            if held[later] == nil, let plaintext = key.open(frame, counter: later) {
                held[later] = plaintext
                framesReordered += 1
                return []
            }
            later += 1
        }
        throw fail(.authenticationFailed(frame: counter))
    }

    /// Delivers the held frames that are now next in turn.
    private mutating func deliverHeld() throws(StreamError) -> [StreamFrame] {
        var frames: [StreamFrame] = []
        while let plaintext = held.removeValue(forKey: counter) {
            if state == .ended { throw fail(.unexpectedFrame("a frame after the end frame")) }
            frames.append(try deliver(plaintext))
        }
        if state == .ended, !held.isEmpty { throw fail(.unexpectedFrame("a frame after the end frame")) }
        return frames
    }

    /// Checks an opened frame's type and body at the counter (10.5, steps 4 to 6) and advances it.
    private mutating func deliver(_ plaintext: [UInt8]) throws(StreamError) -> StreamFrame {
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
        held = [:]
        return error
    }
}
