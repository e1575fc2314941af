/// Where a `HandoffClient` stands with handoffd.
public enum ClientStatus: Sendable, Hashable, CustomStringConvertible {
    /// Not connected, and not trying: nothing has used the client yet, or its first
    /// connection failed (the next use tries again).
    case idle
    /// Connecting for the first time.
    case connecting
    /// Connected: hello done, subscriptions and activities restored.
    case connected(daemon: String)
    /// The connection was lost; reconnecting. `attempt` counts from 1; `lastError`
    /// says why the previous attempt failed, when one did.
    case reconnecting(attempt: Int, lastError: HandoffClientError?)
    /// Closed for good, by `close()` (nil) or because reconnecting gave up.
    case closed(HandoffClientError?)

    /// The status in a few words, for logs.
    public var description: String {
        switch self {
        case .idle: "idle"
        case .connecting: "connecting"
        case .connected(let daemon): "connected to \(daemon)"
        case .reconnecting(let attempt, let error):
            "reconnecting (attempt \(attempt)\(error.map { ": \($0)" } ?? ""))"
        case .closed(let error): "closed\(error.map { ": \($0)" } ?? "")"
        }
    }
}
