/// The first plaintext byte of a frame (docs/continuation.md, section 10.4).
enum StreamFrameType: UInt8, Sendable {
    /// The first frame of each direction; empty body.
    case hello = 0x01
    /// Application bytes; 1 … `StreamFormat.maximumDataLength` of them.
    case data = 0x02
    /// The clean end of the direction; empty body.
    case end = 0x03
    /// The end of the stream on a failure; a 1-byte reason.
    case abort = 0x04
}
