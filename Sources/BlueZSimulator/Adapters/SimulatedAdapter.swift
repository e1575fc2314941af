import DBus

/// One simulated controller and bluetoothd's state for it: `/org/bluez/hciN`
/// with `org.bluez.Adapter1` and `org.bluez.LEAdvertisingManager1`, its
/// discovery clients, registered advertisements and the devices it has heard.
///
/// Confined to its `BluetoothDaemon`.
final class SimulatedAdapter {
    static let adapterInterface = "org.bluez.Adapter1"
    static let advertisingInterface = "org.bluez.LEAdvertisingManager1"

    let name: String
    let index: Int
    let path: DBusObjectPath
    let address: DeviceAddress
    /// bluetoothd's Name: the system name, with " #N" after the first adapter.
    let systemName: String
    let switches: AdapterSwitches
    let box = ExportedObjectBox()

    /// Discovery clients by unique bus name.
    var clients: [String: DiscoveryClient] = [:]
    /// In registration order; pending ones count against the instances too.
    var advertisements: [RegisteredAdvertisement] = []
    var devices: [DeviceAddress: RemoteDevice] = [:]
    /// Monitor applications (owner, root) registered with AdvertisementMonitorManager1.
    var monitorApplications: [(owner: String, root: DBusObjectPath)] = []
    /// Their active monitors (BluetoothDaemon+Monitors.swift).
    var monitors: [RegisteredMonitor] = []

    /// The Powered value the daemon last acted on.
    var appliedPowered = false
    /// The Discoverable value the daemon last acted on.
    var appliedDiscoverable = false
    /// Discovering, as published.
    var discovering = false
    /// Discoverable was switched on by a discovery filter, and goes off with discovery.
    var discoveryMadeDiscoverable = false
    var mergedFilter = MergedDiscoveryFilter()
    var rescanTimer: Task<Void, Never>?
    /// Until when the kernel still runs the scan of a killed bluetoothd (see
    /// `SimulatorConfiguration.killedScanLinger`). Power-off ends it.
    var killedScanUntil: ContinuousClock.Instant?
    var discoverableTimer: Task<Void, Never>?

    init(name: String, index: Int, systemName: String) {
        self.name = name
        self.index = index
        // Names are checked by `isValidName` before an adapter is made.
        path = (try? DBusObjectPath("/org/bluez/" + name)) ?? "/org/bluez"
        address = .adapter(index: index)
        self.systemName = index == 0 ? systemName : "\(systemName) #\(index + 1)"
        switches = AdapterSwitches(alias: self.systemName)
    }

    /// Adapter names are `hci` and a number.
    static func isValidName(_ name: String) -> Bool {
        index(of: name) != nil
    }

    static func index(of name: String) -> Int? {
        guard name.hasPrefix("hci"), name.count > 3, name.count < 9 else { return nil }
        let digits = name.dropFirst(3)
        guard digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber) else { return nil }
        return Int(digits)
    }

    /// The filters of the clients that are discovering now.
    var discoveringFilters: [DiscoveryFilter?] {
        clients.values.filter(\.discovering).map(\.filter)
    }

    var hasDiscoverySession: Bool { clients.values.contains { $0.discovering } }

    /// The controller listens: for discovery, or passively for active monitors.
    var listening: Bool { discovering || (switches.powered && !monitors.isEmpty) }

    /// The kernel still runs a killed bluetoothd's scan.
    var killedScanLingers: Bool { killedScanUntil.map { ContinuousClock.now < $0 } ?? false }

    /// The controller scans: for our clients, or for a killed bluetoothd.
    var controllerScanning: Bool { discovering || killedScanLingers }

    var activeAdvertisements: [RegisteredAdvertisement] { advertisements.filter { $0.state == .active } }

    /// The lowest free advertising instance, or nil when all are taken.
    func freeInstance(limit: Int) -> UInt8? {
        let used = Set(advertisements.map(\.instance))
        return (1...max(1, limit)).lazy.map { UInt8($0) }.first { !used.contains($0) }
    }
}
