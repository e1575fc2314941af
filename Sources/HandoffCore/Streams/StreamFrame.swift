/// What one opened frame says.
public enum StreamFrame: Sendable, Hashable {
    /// The peer's hello: it holds this stream's keys.
    case hello
    /// Application bytes, in order.
    case data([UInt8])
    /// The peer closed its direction cleanly: no more data will come.
    case end
}
