import HandoffCore

/// Why a relayed stream ended badly, as the daemon reports it to its app (docs/continuation.md, section 10.7).
/// No case carries key material or frame contents.
enum StreamRelayError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The incoming direction failed (10.5), or the peer aborted.
    case stream(StreamError)
    /// The peer's hello did not open in time.
    case handshakeTimedOut
    /// No byte crossed in either direction for the idle timeout.
    case idleTimedOut
    /// This side's app went away or could not take the bytes (its socket failed): the peer is told `cancelled`.
    case appGone

    var description: String {
        switch self {
        case .stream(let error): error.description
        case .handshakeTimedOut: "the stream handshake timed out"
        case .idleTimedOut: "the stream was idle too long"
        case .appGone: "the app on this side gave the stream up"
        }
    }
}
