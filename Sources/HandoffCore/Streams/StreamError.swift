/// Why a stream, or one direction of it, ended with a failure (docs/continuation.md, section 10.7).
///
/// No case carries key material or frame contents.
public enum StreamError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A length field is below 17 or above 2046: the bytes are not a stream frame.
    case frameLengthOutOfRange(Int)
    /// The peer's first frame did not open as its hello: it holds another account key or another offer,
    /// or it is not a handoff stream at all.
    case handshakeFailed
    /// Frame `frame` (counting from 0, the hello) did not open: it was tampered with, replayed, dropped,
    /// reordered, or comes from the other direction.
    case authenticationFailed(frame: UInt64)
    /// A frame opened but is out of place: what it was.
    case unexpectedFrame(String)
    /// The bytes ended before the peer's end frame: the link dropped, or someone cut it.
    case truncated
    /// The peer ended the stream with an abort frame.
    case peerAborted(StreamAbortReason)
    /// This side already sealed its end or abort frame.
    case closed
    /// This side has not sealed its hello yet.
    case helloNotSent
    /// This side already sealed its hello.
    case helloAlreadySent
    /// The direction's frame counter is used up (2⁶⁴ − 1 frames).
    case counterExhausted

    /// The reason to put in the abort frame this side sends its peer after this failure of the
    /// incoming direction, once the peer's hello has opened; nil for the failures of the sealing side.
    public var abortReason: StreamAbortReason? {
        switch self {
        case .authenticationFailed, .handshakeFailed: .authenticationFailed
        case .frameLengthOutOfRange, .unexpectedFrame, .counterExhausted: .protocolViolation
        case .truncated, .peerAborted, .closed, .helloNotSent, .helloAlreadySent: nil
        }
    }

    public var description: String {
        switch self {
        case .frameLengthOutOfRange(let length):
            "a frame length of \(length) is outside \(StreamFormat.minimumSealedLength)…\(StreamFormat.maximumSealedLength)"
        case .handshakeFailed: "the stream handshake failed: the peer does not hold this stream's keys"
        case .authenticationFailed(let frame): "frame \(frame) failed authentication: the stream was tampered with"
        case .unexpectedFrame(let what): "unexpected frame: \(what)"
        case .truncated: "the stream ended without its end frame: the link was cut"
        case .peerAborted(let reason): "the peer ended the stream: \(reason)"
        case .closed: "the stream is already closed in this direction"
        case .helloNotSent: "the stream's hello has not been sent yet"
        case .helloAlreadySent: "the stream's hello was already sent"
        case .counterExhausted: "the stream's frame counter is used up"
        }
    }
}
