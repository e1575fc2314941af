/// Seals the frames of one direction (docs/continuation.md, section 10.4): first the hello, then data
/// cut into frames of at most `StreamFormat.maximumDataLength` bytes, then the end frame, or an abort.
///
/// Each frame is sealed at the direction's counter, which starts at 0 and goes up by one per frame, so
/// no nonce is ever used twice under a key. After the end or an abort frame it seals nothing more.
public struct StreamSealer: Sendable {
    private enum State: Sendable { case beforeHello, open, closed }

    private let key: StreamDirectionKey
    /// The counter of the next frame.
    private(set) var counter: UInt64 = 0
    private var state = State.beforeHello

    /// Seals with `key`, from counter 0.
    public init(key: StreamDirectionKey) {
        self.key = key
    }

    /// A sealer whose hello went out and whose next frame is `counter` (for tests of the counter's end).
    init(key: StreamDirectionKey, resumingAt counter: UInt64) {
        self.key = key
        self.counter = counter
        state = .open
    }

    /// The direction this sealer's frames go.
    public var direction: StreamDirection { key.direction }

    /// Whether the end or an abort frame was sealed.
    public var isClosed: Bool { state == .closed }

    /// The hello frame: always the first, 19 bytes.
    public mutating func hello() throws(StreamError) -> [UInt8] {
        switch state {
        case .beforeHello: break
        case .open: throw .helloAlreadySent
        case .closed: throw .closed
        }
        let frame = try frame(.hello, body: [])
        state = .open
        return frame
    }

    /// `data` as consecutive data frames of at most `StreamFormat.maximumDataLength` bytes each, concatenated;
    /// no frame for empty `data`. The frames are all sealed or, on a throw, none is.
    public mutating func seal(_ data: some Collection<UInt8>) throws(StreamError) -> [UInt8] {
        try sealFrames(data).flatMap { $0 }
    }

    /// `data` as consecutive data frames, each apart, none longer than `maximumFrameLength` bytes on the
    /// wire (at most `StreamFormat.maximumFrameLength`, at least 20: one byte of data): a sender whose
    /// send MTU is below 2048 passes it here, so that each frame fits one SDU (section 10.4). No frame for
    /// empty `data`. The frames are all sealed or, on a throw, none is.
    public mutating func sealFrames(
        _ data: some Collection<UInt8>, maximumFrameLength: Int = StreamFormat.maximumFrameLength
    ) throws(StreamError) -> [[UInt8]] {
        try checkOpen()
        let overhead = StreamFormat.maximumFrameLength - StreamFormat.maximumDataLength
        let cut = min(StreamFormat.maximumDataLength, max(1, maximumFrameLength - overhead))
        let bytes = Array(data)
        let count = (bytes.count + cut - 1) / cut
        guard UInt64.max - counter >= UInt64(count) else { throw .counterExhausted }
        var frames: [[UInt8]] = []
        frames.reserveCapacity(count)
        for offset in stride(from: 0, to: bytes.count, by: cut) {
            frames.append(try frame(.data, body: bytes[offset..<min(offset + cut, bytes.count)]))
        }
        return frames
    }

    /// The end frame: this direction is over, cleanly. Nothing can be sealed after it.
    public mutating func end() throws(StreamError) -> [UInt8] {
        try checkOpen()
        let frame = try frame(.end, body: [])
        state = .closed
        return frame
    }

    /// An abort frame with `reason`: the stream failed or was given up. Nothing can be sealed after it.
    public mutating func abort(_ reason: StreamAbortReason) throws(StreamError) -> [UInt8] {
        try checkOpen()
        let frame = try frame(.abort, body: [reason.code])
        state = .closed
        return frame
    }

    private func checkOpen() throws(StreamError) {
        switch state {
        case .beforeHello: throw .helloNotSent
        case .open: break
        case .closed: throw .closed
        }
    }

    /// Seals one frame at the counter and advances it; the last counter value, 2⁶⁴ − 1, is never used.
    private mutating func frame(_ type: StreamFrameType, body: some Collection<UInt8>) throws(StreamError) -> [UInt8] {
        guard counter < UInt64.max else { throw .counterExhausted }
        defer { counter += 1 }
        return key.seal(type, body: body, counter: counter)
    }
}
