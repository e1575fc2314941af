/// Who sent a request: the connection, and its peer's credentials (`SO_PEERCRED`).
public struct Caller: Sendable, Hashable, CustomStringConvertible {
    /// The connection's number, unique for the daemon's lifetime.
    public let client: UInt64
    public let uid: UInt32
    public let pid: Int32

    public init(client: UInt64, uid: UInt32, pid: Int32) {
        self.client = client
        self.uid = uid
        self.pid = pid
    }

    public var description: String { "client \(client) (uid \(uid), pid \(pid))" }
}
