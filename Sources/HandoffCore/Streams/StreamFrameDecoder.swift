/// Cuts whole frames, `length(2) ‖ sealed(length)`, out of the bytes of one direction as they arrive,
/// whatever pieces they come in (L2CAP SDUs of any size). It only frames: opening is `StreamOpener`'s.
///
/// It checks each length field as soon as its two bytes are there, so it never waits for, or holds,
/// more than one frame beyond what it was given.
public struct StreamFrameDecoder: Sendable {
    private var buffer: [UInt8] = []
    /// Where the next frame starts in `buffer`; bytes before it are consumed.
    private var start = 0

    public init() {}

    /// Bytes received and not yet cut into a frame.
    public var bufferedByteCount: Int { buffer.count - start }

    /// Adds received bytes.
    public mutating func append(_ bytes: some Sequence<UInt8>) {
        if start > 0 {
            buffer.removeSubrange(0..<start)
            start = 0
        }
        buffer.append(contentsOf: bytes)
    }

    /// The next whole frame, length field included; nil until all its bytes are there.
    /// - Throws: `StreamError.frameLengthOutOfRange` when the next length field is not 17…2046.
    public mutating func nextFrame() throws(StreamError) -> [UInt8]? {
        guard bufferedByteCount >= StreamFormat.headerLength else { return nil }
        let sealedLength = try Self.sealedLength(buffer[start], buffer[start + 1])
        let end = start + StreamFormat.headerLength + sealedLength
        guard end <= buffer.count else { return nil }
        defer { start = end }
        return Array(buffer[start..<end])
    }

    /// The value of a length field.
    /// - Throws: `StreamError.frameLengthOutOfRange` for a value outside 17…2046.
    static func sealedLength(_ high: UInt8, _ low: UInt8) throws(StreamError) -> Int {
        let length = Int(high) << 8 | Int(low)
        guard length >= StreamFormat.minimumSealedLength, length <= StreamFormat.maximumSealedLength else {
            throw .frameLengthOutOfRange(length)
        }
        return length
    }
}
