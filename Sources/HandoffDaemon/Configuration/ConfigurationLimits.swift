/// The ranges numeric settings must fall in. Parsing enforces them; they are
/// public so the daemon and `handoffctl` can explain them.
public enum ConfigurationLimits {
    /// `[bluetooth] company_id`.
    public static let companyID: ClosedRange<Int> = 1...0xFFFF
    /// `[bluetooth] advertising_min_interval_ms` and `advertising_max_interval_ms`:
    /// the Bluetooth Core range, 20 ms to about 10 485 s.
    public static let advertisingIntervalMilliseconds: ClosedRange<Int> = 20...10_485_000
    /// `[beacon] epoch_seconds`: 5 s to one day. Receivers accept the epochs
    /// either side of their own, so devices' clocks must agree to within an
    /// epoch: below 30 s that asks more of the clocks than NTP promises
    /// everywhere; the end-to-end suite uses 15 s to see rotations quickly.
    public static let epochSeconds: ClosedRange<Int> = 5...86_400
    /// `[nearby] expiry_seconds`. The advertiser renews its beacon every third
    /// of this, and a renewal can take a second or two to be heard, so anything
    /// shorter than 15 s would drop devices that are still there.
    public static let nearbyExpirySeconds: ClosedRange<Int> = 15...86_400
    /// `[nearby] registry_cap`.
    public static let nearbyRegistryCap: ClosedRange<Int> = 1...100_000
    /// `[socket] max_clients`.
    public static let maxClients: ClosedRange<Int> = 1...10_000
    /// `[socket] max_activities_per_client`.
    public static let maxActivitiesPerClient: ClosedRange<Int> = 1...10_000
    /// `[socket] max_line_bytes`: room for a request with the largest userInfo,
    /// title and URL the protocol allows, and at most 1 MiB.
    public static let maxLineBytes: ClosedRange<Int> = 8 * 1024...1024 * 1024
    /// `[socket] mode`: permission bits only (no setuid, setgid or sticky bit).
    public static let socketMode: ClosedRange<Int> = 0...0o777
    /// `[streams] max_per_user` and `max_total`: continuation streams open at once.
    public static let streams: ClosedRange<Int> = 1...1024
    /// `[socket] path`: a socket address holds at most 107 bytes of path.
    public static let socketPathBytes = 107
}
