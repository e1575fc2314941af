/// What the daemon core needs from the configuration.
public struct DaemonSettings: Sendable, Equatable {
    /// Shown in `hello` and `status`.
    public var daemonName = "handoffd \(HandoffDaemon.version)"
    public var epochSeconds: UInt32 = 600
    public var companyID: UInt16 = 0xFFFF
    /// A nearby entry is dropped this long after it was last heard.
    public var expiry: Duration = .seconds(45)
    public var registryCap = 256
    public var maxActivitiesPerClient = 16
    /// What the account's other devices call this one; nil: `DeviceDirectory.defaultName()`.
    public var deviceName: String?
    /// Where the device identity and the rosters are kept (the account key directory);
    /// nil keeps a fresh identity and the rosters in memory only (tests).
    public var deviceDirectory: String?
    /// How long an activity of an unknown device is nearby before this device introduces
    /// itself (docs/devices.md, section 5): not while the other laptop is just starting up,
    /// nor when the user continues at once.
    public var introductionDelay: Duration = .seconds(10)
    /// No introduction or rekey delivery starts within this long of the end of another exchange
    /// over GATT (`DeviceDirectory.quietAfterExchange`); tests without Bluetooth set zero.
    public var quietAfterExchange: Duration = .seconds(30)
    /// Whether this device introduces itself to unknown devices of its accounts (config
    /// `[device] introduce`). It answers their introductions either way.
    public var introductions = true
    /// Continuation streams (docs/continuation.md, section 10): at most this many open at once for one
    /// user's apps (config `[streams] max_per_user`) …
    public var maxStreamsPerUser = 4
    /// … and on this laptop (`[streams] max_total`).
    public var maxStreamsTotal = 16
    /// nil: streams travel over LE L2CAP channels (`L2CAPStreamTransport`); a directory: over the local
    /// stand-in (`LocalStreamTransport`) in it (config `[streams] local_directory`, tests and the demo only).
    public var streamsLocalDirectory: String?
    /// Where the apps' stream sockets are made (`StreamAppSocket`): the directory of `[socket] path`; nil
    /// (tests of the core) makes no streams.
    public var streamSocketDirectory: String?
    /// bluetoothd's `main.conf` (`[bluetooth] bluetoothd_main_conf`), whose `TemporaryTimeout` `status`
    /// reports for continuation streams; nil: not read.
    public var bluetoothdMainConf: String?

    public init() {}
}
