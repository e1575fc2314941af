import BlueZ
import DBus
import DBusTestSupport
import Testing

/// The mirror reads bluetoothd's `PropertiesChanged` in place (a typed path for
/// ManufacturerData and RSSI, a full decoding for anything else): whatever the
/// shape, it must hold exactly the values that were sent.
@Suite(.serialized, .timeLimit(.minutes(1))) struct BlueZObjectManagerSignalTests {
    static let device: DBusObjectPath = "/org/bluez/hci0/dev_00_AA_01_00_00_20"
    static let properties = DBusType.array(.dictEntry(key: .string, value: .variant))

    /// A fake bluetoothd with one device, and a way to send it PropertiesChanged.
    static func fake(on bus: PrivateBus) async throws -> DBusConnection {
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        _ = try await connection.requestName(BlueZ.serviceName, flags: [.doNotQueue])
        try connection.emitSignal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
            [
                .objectPath(device),
                .array(
                    element: .dictEntry(key: .string, value: properties),
                    [
                        .dictEntry(
                            .string(Device1.interface),
                            .vardict([
                                "Address": .string("00:AA:01:00:00:20"), "AddressType": .string("random"),
                                "TxPower": .int16(4), "Name": .string("before"),
                            ]))
                    ]),
            ])
        return connection
    }

    static func manufacturerData(_ entries: [(UInt16, DBusValue)]) -> DBusValue {
        .dictionary(key: .uint16, value: .variant, entries.map { (.uint16($0.0), .variant($0.1)) })
    }

    @Test func theMirrorHoldsExactlyWhatWasSent() async throws {
        let bus = try PrivateBus()
        let client = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: client)
        let fake = try await Self.fake(on: bus)
        try await eventually { manager.properties(of: Self.device, interface: Device1.interface) != nil }
        let shapes: [DBusValue] = [
            // The usual: bytes under one or more companies.
            Self.manufacturerData([(0xFFFF, .bytes(Array(0..<24)))]),
            Self.manufacturerData([(0x004C, .bytes([9, 9])), (0xFFFF, .bytes([]))]),
            // Not bytes, and empty: read in full.
            Self.manufacturerData([(0xFFFF, .string("not bytes"))]),
            .dictionary(key: .uint16, value: .variant, []),
            // Not even a{qv}.
            .dictionary(key: .string, value: .variant, [(.string("x"), .variant(.uint32(1)))]),
        ]
        for (index, shape) in shapes.enumerated() {
            let rssi = Int16(-40 - index)
            try fake.emitSignal(
                path: Self.device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                [
                    .string(Device1.interface),
                    .vardict(["ManufacturerData": shape, "RSSI": .int16(rssi), "Name": .string("n\(index)")]),
                    .strings(index == 0 ? ["TxPower"] : []),
                ])
            try await eventually {
                manager.properties(of: Self.device, interface: Device1.interface)?["RSSI"] == .int16(rssi)
            }
            let now = try #require(manager.properties(of: Self.device, interface: Device1.interface))
            #expect(now["ManufacturerData"] == shape, "shape \(index)")
            #expect(now["Name"] == .string("n\(index)"))
            #expect(now["TxPower"] == nil)
            #expect(now["Address"] == .string("00:AA:01:00:00:20"))
        }
        // A PropertiesChanged of another shape than (sa{sv}as) changes nothing.
        try fake.emitSignal(
            path: Self.device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string(Device1.interface), .vardict(["RSSI": .int16(1)])])
        try fake.emitSignal(
            path: Self.device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string(Device1.interface), .vardict(["RSSI": .int16(2)]), .strings([])])
        try await eventually {
            manager.properties(of: Self.device, interface: Device1.interface)?["RSSI"] == .int16(2)
        }
        manager.stop()
        await fake.close()
        await client.close()
        bus.stop()
    }
}
