import BlueZ
import DBus
import Logging

/// Everything `handoffd` can be configured with, read from `handoffd.toml`.
///
/// Each property documents the TOML setting it comes from. Values are typed and
/// already validated: a `DaemonConfiguration` obtained from ``parse(_:source:)``
/// or ``load(from:)`` is always usable. ``defaults`` is what an absent file or
/// an absent key means; the shipped `Config/handoffd.toml` lists the same values.
public struct DaemonConfiguration: Sendable, Equatable {
    // MARK: [bluetooth]

    /// `[bluetooth] adapter`: "auto" (the first powered adapter), an interface
    /// name such as "hci0", or an adapter address.
    public var adapter: AdapterSelector
    /// `[bluetooth] power_on`: switch the adapter on when it is off.
    public var powerOnAdapter: Bool
    /// `[bluetooth] company_id`: the Bluetooth SIG company identifier of the
    /// beacon's manufacturer data (0xFFFF is the one reserved for testing).
    public var companyID: UInt16
    /// `[bluetooth] advertising_min_interval_ms` … `advertising_max_interval_ms`:
    /// the advertising interval BlueZ is asked for, in milliseconds.
    public var advertisingIntervalMilliseconds: ClosedRange<UInt32>
    /// `[bluetooth] advertisement_type`: "peripheral" (connectable: other devices
    /// connect to fetch a continuation, docs/continuation.md), "broadcast"
    /// (non-connectable: activities are seen but cannot be continued from here),
    /// or "auto" (nil here). Either way connectable only while the kernel says
    /// LE privacy is on for the adapter (`AddressPrivacyPolicy`).
    public var advertisementType: LEAdvertisementData.AdvertisingType?
    /// `[bluetooth] address_privacy`: what to do when LE privacy is on but the
    /// controller has legacy advertising only, so that its one private address
    /// outlives beacon epochs (`AddressPrivacyPolicy`): "strict" stays off the
    /// air, "warn" advertises and says the beacons are linkable.
    public var addressPrivacy: AddressPrivacyMode
    /// `[bluetooth] bluetoothd_main_conf`: bluetoothd's `main.conf`, whose `Privacy`
    /// explains the kernel's state, and stands in for it when the kernel cannot be asked.
    public var bluetoothdMainConf: String

    // MARK: [beacon]

    /// `[beacon] epoch_seconds`: how long a beacon identity lasts before it
    /// rotates. Every device of an account must use the same value.
    public var epochSeconds: UInt32

    // MARK: [nearby]

    /// `[nearby] expiry_seconds`: a nearby activity is dropped this long after
    /// its beacon was last seen.
    public var nearbyExpiry: Duration
    /// `[nearby] registry_cap`: the most nearby activities kept at once.
    public var nearbyRegistryCap: Int

    // MARK: [scan]

    /// `[scan] monitor`: "auto" (true) listens with a passive advertisement
    /// monitor when bluetoothd offers one (BlueZ 5.66: with -E) and with
    /// filtered discovery otherwise; "off" (false) always discovers.
    public var scanMonitor: Bool

    // MARK: [socket]

    /// `[socket] path`: where the socket for local apps is created.
    public var socketPath: String
    /// `[socket] mode`: the socket's permission bits (parsed from an octal string).
    public var socketMode: UInt16
    /// `[socket] group`: the group the socket is given; nil leaves it as created.
    public var socketGroup: String?
    /// `[socket] max_clients`: the most clients connected at once.
    public var maxClients: Int
    /// `[socket] max_activities_per_client`: the most activities one client may advertise at once.
    public var maxActivitiesPerClient: Int
    /// `[socket] max_line_bytes`: the longest request line a client may send.
    public var maxLineBytes: Int

    // MARK: [accounts]

    /// `[accounts] directory`: where account key files are kept.
    public var accountsDirectory: String

    // MARK: [device]

    /// `[device] name`: what the account's other devices call this one (docs/devices.md);
    /// nil (or "" in the file) means the machine's pretty hostname (`hostnamectl`), else its hostname.
    public var deviceName: String?

    /// `[device] introduce`: whether this device introduces itself to devices of its
    /// accounts it does not know yet, to learn their names (docs/devices.md, section 5).
    public var introduce: Bool

    // MARK: [streams]

    /// `[streams] max_per_user`: continuation streams one user's apps may have open at once, on either side.
    public var maxStreamsPerUser: Int
    /// `[streams] max_total`: continuation streams open at once on this laptop.
    public var maxStreamsTotal: Int
    /// `[streams] local_directory`: nil (the default) carries streams over LE L2CAP channels; a directory
    /// selects the local stand-in (`LocalStreamTransport`, tests and the simulator demo only).
    public var streamsLocalDirectory: String?

    // MARK: [log]

    /// `[log] level`: the least severe message that is logged.
    public var logLevel: Logger.Level

    // MARK: [dbus]

    /// `[dbus] bus`: "system", or the address of another bus (tests and the demo use a private one).
    public var bus: DBusBusAddress

    /// The value of every setting when the file does not mention it.
    public static let defaults = DaemonConfiguration(
        adapter: .automatic,
        powerOnAdapter: true,
        companyID: 0xFFFF,
        advertisingIntervalMilliseconds: 100...150,
        advertisementType: nil,
        addressPrivacy: .strict,
        bluetoothdMainConf: "/etc/bluetooth/main.conf",
        epochSeconds: 600,
        nearbyExpiry: .seconds(45),
        nearbyRegistryCap: 256,
        scanMonitor: true,
        socketPath: "/run/handoffd/handoffd.sock",
        socketMode: 0o660,
        socketGroup: "handoff",
        maxClients: 64,
        maxActivitiesPerClient: 16,
        maxLineBytes: 16 * 1024,
        accountsDirectory: "/var/lib/handoffd/accounts",
        deviceName: nil,
        introduce: true,
        maxStreamsPerUser: 4,
        maxStreamsTotal: 16,
        streamsLocalDirectory: nil,
        logLevel: .info,
        bus: .system
    )
}
