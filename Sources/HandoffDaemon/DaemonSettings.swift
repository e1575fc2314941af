/// What the daemon core needs from the configuration.
public struct DaemonSettings: Sendable, Equatable {
    /// Shown in `hello` and `status`.
    public var daemonName = "handoffd \(HandoffDaemon.version)"
    public var epochSeconds: UInt32 = 600
    public var companyID: UInt16 = 0xFFFF
    /// A nearby entry is dropped this long after it was last heard.
    public var expiry: Duration = .seconds(45)
    public var registryCap = 256
    public var maxClients = 64
    public var maxActivitiesPerClient = 16
    /// Events queued for one slow client before it is disconnected.
    public var maxQueuedFrames = 1024

    public init() {}
}
