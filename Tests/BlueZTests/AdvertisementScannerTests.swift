@testable import BlueZ
import DBus
import DBusTestSupport
import Testing

/// The scanner against the simulator's flood (Device1 PropertiesChanged with
/// ManufacturerData 0xFFFF: the report number in 8 bytes, big-endian), and the
/// object-manager mirror under it.
@Suite(.serialized, .timeLimit(.minutes(1))) struct AdvertisementScannerTests {
    static let hci0: DBusObjectPath = "/org/bluez/hci0"
    static let hci1: DBusObjectPath = "/org/bluez/hci1"

    /// The flood's report number; the InterfacesAdded of its devices carry 0.
    static func number(_ event: ScanEvent) -> UInt64? {
        guard case .report(let report) = event, report.data.count >= 8 else { return nil }
        return report.data.prefix(8).reduce(0) { $0 << 8 | UInt64($1) }
    }

    static func startFlood(_ sim: SimulatedBlueZ, devices: UInt32, rate: UInt32, total: UInt32) async throws {
        _ = try await sim.callControl("StartFlood", [.string("hci0"), .uint32(devices), .uint32(rate), .uint32(total)])
    }

    @Test func coalescedReportsArriveCompleteAndInOrder() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--adapters", "1", "--quiet"])
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: connection)
        let scanner = AdvertisementScanner(
            manager: manager, adapter: Self.hci0, companyID: 0xFFFF, coalescing: .milliseconds(20))
        try await Self.startFlood(sim, devices: 10, rate: 2000, total: 600)
        var numbers: [UInt64] = []
        var addresses: Set<String> = []
        for await event in scanner.events {
            guard let number = Self.number(event) else { continue }
            if case .report(let report) = event {
                addresses.insert(report.address)
                #expect(report.companyID == 0xFFFF && report.data.count == 24 && report.rssi != nil)
            }
            if number > 0 { numbers.append(number) }
            if numbers.count == 599 { break }
        }
        #expect(numbers == Array(1...599))
        #expect(addresses.count == 10)
        #expect(scanner.counters.dropped == 0)
        scanner.stop()
        manager.stop()
        await connection.close()
        await sim.stop()
    }

    @Test func stopHandsOverWhatIsStillGathered() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--adapters", "1", "--quiet"])
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: connection)
        // An interval far longer than the test: only stop() can hand the events over.
        let scanner = AdvertisementScanner(
            manager: manager, adapter: Self.hci0, companyID: 0xFFFF, coalescing: .seconds(600))
        try await Self.startFlood(sim, devices: 5, rate: 0, total: 100)
        // 5 InterfacesAdded and 100 PropertiesChanged.
        try await eventually { scanner.counters.reports == 105 }
        scanner.stop()
        var numbers: [UInt64] = []
        for await event in scanner.events {
            if let number = Self.number(event) { numbers.append(number) }
        }
        #expect(numbers.count == 105)
        #expect(numbers.filter { $0 > 0 } == Array(1...99))
        manager.stop()
        await connection.close()
        await sim.stop()
    }

    @Test func withoutCoalescingEachReportIsHandedOverAtOnce() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--adapters", "1", "--quiet"])
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: connection)
        let scanner = AdvertisementScanner(manager: manager, adapter: Self.hci0, companyID: 0xFFFF)
        try await Self.startFlood(sim, devices: 3, rate: 1000, total: 200)
        var numbers: [UInt64] = []
        for await event in scanner.events {
            guard let number = Self.number(event), number > 0 else { continue }
            numbers.append(number)
            if number == 199 { break }
        }
        #expect(numbers == Array(1...199))
        scanner.stop()
        manager.stop()
        await connection.close()
        await sim.stop()
    }

    /// bluetoothd invalidates RSSI when discovery stops and a connectable device
    /// stays: the mirror must drop it, not keep the last value.
    @Test func theMirrorDropsInvalidatedProperties() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--quiet"])
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: connection)
        let advertisement = try await LEAdvertisement1.export(
            LEAdvertisementData(type: .peripheral, manufacturerData: [0xFFFF: [1, 2, 3]]), at: "/test/adv",
            on: connection, onRelease: {})
        try await LEAdvertisingManager1.registerAdvertisement(advertisement.path, adapter: Self.hci0, on: connection)
        try await Adapter1.setDiscoveryFilter(.handoff, adapter: Self.hci1, on: connection)
        try await Adapter1.startDiscovery(adapter: Self.hci1, on: connection)
        try await eventually {
            manager.devices(on: Self.hci1).contains { $0.manufacturerData[0xFFFF] == [1, 2, 3] && $0.rssi != nil }
        }
        try await Adapter1.stopDiscovery(adapter: Self.hci1, on: connection)
        try await eventually {
            manager.devices(on: Self.hci1).contains { $0.manufacturerData[0xFFFF] == [1, 2, 3] && $0.rssi == nil }
        }
        await connection.close()
        await sim.stop()
    }
}
