/// Why a peer ended a stream with an abort frame; the code is the frame's 1-byte body.
public enum StreamAbortReason: Sendable, Hashable, CustomStringConvertible {
    /// Code 1: a frame from this side did not open (tampered with, replayed, dropped or reordered on the way).
    case authenticationFailed
    /// Code 2: a frame from this side opened but broke the stream's rules.
    case protocolViolation
    /// Code 3: the peer's app or daemon gave the stream up before its end.
    case cancelled
    /// A code this version does not know.
    case unknown(UInt8)

    /// The reason of `code`.
    public init(code: UInt8) {
        switch code {
        case 1: self = .authenticationFailed
        case 2: self = .protocolViolation
        case 3: self = .cancelled
        default: self = .unknown(code)
        }
    }

    /// The abort frame's body byte.
    public var code: UInt8 {
        switch self {
        case .authenticationFailed: 1
        case .protocolViolation: 2
        case .cancelled: 3
        case .unknown(let code): code
        }
    }

    public var description: String {
        switch self {
        case .authenticationFailed: "a frame failed authentication"
        case .protocolViolation: "a frame broke the stream's rules"
        case .cancelled: "the stream was cancelled"
        case .unknown(let code): "unknown reason \(code)"
        }
    }
}
