import DBus

/// How a `BlueZSimulator` behaves. The defaults follow bluetoothd 5.66 on
/// btvirt's virtual LE controllers, except where noted.
public struct SimulatorConfiguration: Sendable {
    /// The bus to own `org.bluez` (and `org.handoff.Simulator`) on.
    public var bus: DBusBusAddress = .system
    /// How many adapters, `hci0` … `hci(N-1)`, exist at start.
    public var adapterCount = 2
    /// Advertising instances per adapter (btvirt offers 5).
    public var supportedInstances = 5
    /// The legacy advertising data budget, `SupportedCapabilities.MaxAdvLen`.
    public var maxAdvertisingLength = 31
    /// How often a scanning adapter hears every advertisement again, like
    /// bluetoothd restarting its LE scan.
    public var rescanInterval: Duration = .seconds(10)
    /// How long a temporary Device1 lives after it was last seen (bluetoothd's `TemporaryTimeout`).
    public var temporaryTimeout: Duration = .seconds(30)
    /// The RSSI reported for every advertisement, in dBm.
    public var rssi: Int16 = -55
    /// Each report's RSSI varies by up to this much either way.
    public var rssiJitter: Int16 = 3
    /// Air latency: each report arrives after a delay drawn from this range.
    public var latency: ClosedRange<Duration> = .milliseconds(2) ... .milliseconds(8)
    /// Give an advertisement a new random address when its ManufacturerData changes.
    public var rotateOnUpdate = true
    /// The controllers have only legacy advertising, like btvirt's and many
    /// Bluetooth 4.x chips. Starting a non-connectable advertisement takes a new
    /// random address, which such a controller refuses while it scans, and the
    /// kernel does not pause the scan for it. So, on an adapter that is
    /// discovering: `RegisterAdvertisement` of a broadcast advertisement fails
    /// with `org.bluez.Error.Failed` "Failed to register advertisement" (after
    /// reading the object, as bluetoothd 5.66 on kernel 6.1 does), and a live
    /// update of an active one takes it off the air, still registered, until the
    /// adapter stops discovering. false: extended-advertising controllers, where
    /// both work.
    public var legacyAdvertising = true
    /// Whether a connected device's `ServicesResolved` turns true before the
    /// `InterfacesAdded` of its GATT objects (true) or after them. bluetoothd
    /// flushes each object's signals on its own, and on the VM rig a client
    /// once got `ServicesResolved` before the objects of the services it had
    /// just exported; clients must wait for the objects. true, the harder order,
    /// is the default.
    public var servicesResolvedFirst = true
    /// The error name for advertising data over the budget. The API documents
    /// `org.bluez.Error.InvalidLength`; bluetoothd 5.66 actually sends
    /// `org.bluez.Error.Failed` ("Failed to register advertisement").
    public var lengthErrorName = "org.bluez.Error.InvalidLength"
    /// The fraction of air reports dropped at random, 0 … 1.
    public var dropRate = 0.0
    /// The system name adapters take (bluetoothd's Name; adapters after the first get " #N").
    public var systemName = "handoff-sim"
    /// The ATT MTU of every LE connection: what both bluetoothds offer by default
    /// (main.conf `ExchangeMTU`, 517), so what they agree on. 23 … 517.
    public var attMTU: UInt16 = 517
    /// How long `Device1.Connect` waits for a connectable advertisement from the
    /// device before it fails with `org.bluez.Error.Failed` "le-connection-abort-by-local".
    /// nil (the default) waits like bluetoothd 5.66 with the kernel's passive-scan
    /// connect: with no connectable advertiser, Connect never answers (the caller
    /// gets NoReply from the bus) until Disconnect cancels it.
    public var connectTimeout: Duration?
    /// ATT bearers per LE connection (main.conf `[GATT] Channels`, default 3, so
    /// EATT). Notifications are spread over the bearers and can arrive out of
    /// order, as seen on the VM rig; 1 delivers them in order.
    public var attChannels = 3
    /// How long `Device1.Disconnect` takes: bluetoothd 5.66 drops the link
    /// `DISCONNECT_TIMER` (2 s) after the request.
    public var disconnectDelay: Duration = .seconds(2)
    /// How long the kernel goes on scanning for a bluetoothd that was killed
    /// (SIGKILL, `restart(graceful: false)`) while it discovered. The kernel
    /// does not stop that LE discovery round (`DISCOV_LE_TIMEOUT`, 10.24 s)
    /// when bluetoothd dies, and the new bluetoothd does not know of it. Until
    /// it ends or the adapter is powered off: the kernel refuses
    /// `StartDiscovery` (Busy), so bluetoothd answers `InProgress` (as for a
    /// second session) and drops the session, and `Discovering` stays false;
    /// and a legacy controller refuses broadcast advertisements, since it scans. On the VM rig the remainder of
    /// the round is anything from 0 to 10.24 s; the default is the worst case.
    /// Zero: the kernel's scan ends with bluetoothd.
    public var killedScanLinger: Duration = .milliseconds(10240)
    /// The first this many LE links come up but their GATT discovery never ends:
    /// `ServicesResolved` stays false on both ends until the link goes down. Seen
    /// on the VM rig with bluetoothd 5.66: a central connected to a peripheral whose
    /// link to another central was still going down, its ATT bearer failed ("write
    /// failed: Bad file descriptor") and nothing recovered it while the link stayed up.
    public var stalledDiscoveries = 0
    /// The first LE link that carries this many notifications drops right after
    /// the last of them, as when the other device goes out of range mid-exchange
    /// (`Connected` false on both ends, later notifications lost); nil never.
    public var dropLinkAfterNotifications: Int?
    /// Offer bluetoothd's experimental interfaces, as `bluetoothd -E` does: each
    /// adapter then has `org.bluez.AdvertisementMonitorManager1`
    /// (SupportedMonitorTypes ["or_patterns"], SupportedFeatures [], as BlueZ
    /// 5.66 on btvirt). false, the default, is bluetoothd 5.66 without `-E`: no
    /// such interface.
    public var experimental = false
    /// Receives one line per event; nil is silent.
    public var log: (@Sendable (String) -> Void)?

    public init() {}

    /// Checks the values, with a message naming the bad one.
    public func validate() throws(SimulatorConfigurationError) {
        func check(_ ok: Bool, _ message: String) throws(SimulatorConfigurationError) {
            if !ok { throw SimulatorConfigurationError(message: message) }
        }
        try check((0...64).contains(adapterCount), "adapter count must be 0…64")
        try check((1...255).contains(supportedInstances), "supported instances must be 1…255")
        try check((0...251).contains(maxAdvertisingLength), "max advertising length must be 0…251")
        try check(rescanInterval > .zero, "rescan interval must be positive")
        try check(temporaryTimeout > .zero, "temporary timeout must be positive")
        try check((-127...20).contains(rssi), "RSSI must be -127…20 dBm")
        try check((0...40).contains(rssiJitter), "RSSI jitter must be 0…40 dB")
        try check(latency.lowerBound >= .zero, "latency must not be negative")
        try check((0...1).contains(dropRate), "drop rate must be 0…1")
        try check((23...517).contains(attMTU), "ATT MTU must be 23…517")
        try check(connectTimeout.map { $0 > .zero } ?? true, "connect timeout must be positive")
        try check((1...5).contains(attChannels), "ATT channels must be 1…5")
        try check(stalledDiscoveries >= 0, "stalled discoveries must not be negative")
        try check(dropLinkAfterNotifications.map { $0 > 0 } ?? true, "the notifications before a link drops must be positive")
        try check(disconnectDelay >= .zero, "disconnect delay must not be negative")
        try check(killedScanLinger >= .zero, "killed-scan linger must not be negative")
        try check(DBusNames.isValidErrorName(lengthErrorName), "'\(lengthErrorName)' is not a D-Bus error name")
    }
}
