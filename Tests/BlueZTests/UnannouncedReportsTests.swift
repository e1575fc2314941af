import BlueZ
import DBus
import DBusTestSupport
import Testing

/// An advertisement for a device bluetoothd never announced cannot become a
/// report (no address, no adapter in the mirror): the scanner counts it as
/// dropped when it carries its company ID and names a device of its adapter,
/// and nothing else.
@Suite(.serialized, .timeLimit(.minutes(1))) struct UnannouncedReportsTests {
    static let hci0: DBusObjectPath = "/org/bluez/hci0"
    static let known = BlueZObjectManagerSignalTests.device
    static let stranger: DBusObjectPath = "/org/bluez/hci0/dev_00_AA_01_00_00_99"
    static let otherAdapter: DBusObjectPath = "/org/bluez/hci1/dev_00_AA_01_00_00_98"

    static func advertise(_ fake: DBusConnection, _ path: DBusObjectPath, company: UInt16, rssi: Int16) throws {
        try fake.emitSignal(
            path: path, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [
                .string(Device1.interface),
                .vardict([
                    "ManufacturerData": BlueZObjectManagerSignalTests.manufacturerData([(company, .bytes([1, 2, 3]))]),
                    "RSSI": .int16(rssi),
                ]),
                .strings([]),
            ])
    }

    @Test func anAdvertisementOfAnUnannouncedDeviceIsCountedAsDropped() async throws {
        let bus = try PrivateBus()
        let client = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: client)
        let scanner = AdvertisementScanner(manager: manager, adapter: Self.hci0, companyID: 0xFFFF)
        let fake = try await BlueZObjectManagerSignalTests.fake(on: bus)
        try await eventually { manager.properties(of: Self.known, interface: Device1.interface) != nil }

        // Lost: ours, on hci0, never announced (twice). Not ours to count: another
        // company's, another adapter's.
        try Self.advertise(fake, Self.stranger, company: 0xFFFF, rssi: -50)
        try Self.advertise(fake, Self.stranger, company: 0xFFFF, rssi: -51)
        try Self.advertise(fake, Self.stranger, company: 0x004C, rssi: -52)
        try Self.advertise(fake, Self.otherAdapter, company: 0xFFFF, rssi: -53)
        // The announced device's report comes after them on the bus.
        try Self.advertise(fake, Self.known, company: 0xFFFF, rssi: -54)
        var rssis: [Int16?] = []
        for await event in scanner.events {
            guard case .report(let report) = event else { continue }
            rssis.append(report.rssi)
            if report.rssi == -54 { break }
        }
        #expect(rssis.last == -54)
        #expect(!rssis.contains(-50) && !rssis.contains(-53))
        let counters = scanner.counters
        #expect(counters.dropped == 2, "counters: \(counters)")
        #expect(counters.unannounced == 2)
        // Nothing of it reached the mirror either.
        #expect(manager.properties(of: Self.stranger, interface: Device1.interface) == nil)

        scanner.stop()
        manager.stop()
        await fake.close()
        await client.close()
        bus.stop()
    }
}
