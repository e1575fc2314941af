import BlueZ
import DBus
import DBusTestSupport
import Synchronization
import Testing

/// The mirror reads bluetoothd's `PropertiesChanged` in place (a typed path for
/// a change of nothing but ManufacturerData and RSSI, a full decoding for
/// anything else): whatever the shape, it must hold exactly the values that
/// were sent, and each kind of observer must hear what concerns it.
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

    /// What both kinds of observer heard.
    final class Heard: Sendable {
        let events = Mutex<[BlueZObjectManager.Event]>([])
        let advertisements = Mutex<[DeviceAdvertisement]>([])

        /// Device1 `PropertiesChanged` events, as the names they changed and invalidated.
        var deviceChanges: [[String]] {
            events.withLock { events in
                events.compactMap { event in
                    guard case .propertiesChanged(_, Device1.interface, let changed, let invalidated, _) = event else {
                        return nil
                    }
                    return changed.keys.sorted() + invalidated.map { "-" + $0 }
                }
            }
        }
        var lastAdvertisement: DeviceAdvertisement? { advertisements.withLock { $0.last } }
        var advertisementCount: Int { advertisements.withLock { $0.count } }
    }

    static func changed(
        _ fake: DBusConnection, _ properties: [String: DBusValue], invalidated: [String] = [],
        on device: DBusObjectPath = device
    ) throws {
        try fake.emitSignal(
            path: device, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string(Device1.interface), .vardict(properties), .strings(invalidated)])
    }

    @Test func anAdvertisementGoesToAdvertisementObserversAndTheMirrorFollows() async throws {
        let bus = try PrivateBus()
        let client = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: client)
        let heard = Heard()
        let tokens = [
            manager.observe { event in heard.events.withLock { $0.append(event) } },
            manager.observeAdvertisements { advertisement in heard.advertisements.withLock { $0.append(advertisement) } },
        ]
        let fake = try await Self.fake(on: bus)
        // The device's appearance is an advertisement too: no RSSI or data yet.
        try await eventually { heard.advertisementCount == 1 }
        #expect(
            heard.lastAdvertisement
                == DeviceAdvertisement(
                    device: Self.device, adapter: "/org/bluez/hci0", address: "00:AA:01:00:00:20", addressType: "random",
                    rssi: nil, manufacturerData: ManufacturerData()))

        // ManufacturerData and RSSI alone: the typed path.
        let data = Self.manufacturerData([(0xFFFF, .bytes(Array(0..<24))), (0x004C, .bytes([7]))])
        try Self.changed(fake, ["ManufacturerData": data, "RSSI": .int16(-50)])
        try await eventually { heard.advertisementCount == 2 }
        #expect(heard.lastAdvertisement?.rssi == -50)
        #expect(heard.lastAdvertisement?.manufacturerData == ManufacturerData(data))
        #expect(heard.lastAdvertisement?.manufacturerData[0xFFFF] == Array(0..<24))
        var now = try #require(manager.properties(of: Self.device, interface: Device1.interface))
        #expect(now["ManufacturerData"] == data && now["RSSI"] == .int16(-50) && now["Name"] == .string("before"))

        // RSSI alone keeps the data.
        try Self.changed(fake, ["RSSI": .int16(-60)])
        try await eventually { heard.advertisementCount == 3 }
        #expect(heard.lastAdvertisement?.rssi == -60)
        #expect(heard.lastAdvertisement?.manufacturerData == ManufacturerData(data))
        #expect(manager.devices(on: "/org/bluez/hci0").first?.rssi == -60)
        // Data that is not bytes cannot be typed: the full decoding keeps it exactly.
        let notBytes = Self.manufacturerData([(0xFFFF, .string("x"))])
        try Self.changed(fake, ["ManufacturerData": notBytes])
        try await eventually { heard.deviceChanges.count == 1 }
        #expect(manager.properties(of: Self.device, interface: Device1.interface)?["ManufacturerData"] == notBytes)
        #expect(heard.lastAdvertisement?.manufacturerData == ManufacturerData())
        #expect(heard.lastAdvertisement?.rssi == -60)
        // So far only that one reached the general observers.
        #expect(heard.deviceChanges == [["ManufacturerData"]])

        // With another property, both kinds hear it.
        try Self.changed(fake, ["ManufacturerData": data, "RSSI": .int16(-70), "Name": .string("after")])
        try await eventually { heard.deviceChanges.count == 2 }
        #expect(heard.deviceChanges.last == ["ManufacturerData", "Name", "RSSI"])
        #expect(heard.lastAdvertisement?.rssi == -70 && heard.lastAdvertisement?.manufacturerData[0x004C] == [7])
        // An invalidated RSSI (discovery stopped) takes the general path and the record follows.
        try Self.changed(fake, [:], invalidated: ["RSSI"])
        try await eventually { heard.deviceChanges.count == 3 }
        #expect(heard.lastAdvertisement?.rssi == nil)
        now = try #require(manager.properties(of: Self.device, interface: Device1.interface))
        #expect(now["RSSI"] == nil && now["ManufacturerData"] == data && now["Name"] == .string("after"))
        // A name change alone is not an advertisement.
        let advertisements = heard.advertisementCount
        try Self.changed(fake, ["Name": .string("again")])
        try await eventually { heard.deviceChanges.count == 4 }
        #expect(heard.advertisementCount == advertisements)

        // A typed change then a general one: the general event's `current` has the typed values.
        try Self.changed(fake, ["RSSI": .int16(-80)])
        try Self.changed(fake, ["Name": .string("last")])
        try await eventually { heard.deviceChanges.count == 5 }
        let current = heard.events.withLock { events -> [String: DBusValue]? in
            guard case .propertiesChanged(_, _, _, _, let current)? = events.last else { return nil }
            return current
        }
        #expect(current?["RSSI"] == .int16(-80) && current?["ManufacturerData"] == data)

        // Gone: later advertisements for the path reach nobody.
        try fake.emitSignal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
            [.objectPath(Self.device), .strings([Device1.interface])])
        try await eventually { manager.properties(of: Self.device, interface: Device1.interface) == nil }
        let count = heard.advertisementCount
        try Self.changed(fake, ["RSSI": .int16(-90)])
        // A marker after it, from the same sender: another device appearing.
        let other: DBusObjectPath = "/org/bluez/hci0/dev_00_AA_01_00_00_21"
        try fake.emitSignal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
            [
                .objectPath(other),
                .dictionary(
                    key: .string, value: Self.properties,
                    [(.string(Device1.interface), .vardict(["Address": .string("00:AA:01:00:00:21")]))]),
            ])
        try await eventually { heard.advertisementCount == count + 1 }
        #expect(heard.lastAdvertisement?.device == other && heard.lastAdvertisement?.addressType == "public")
        #expect(manager.properties(of: Self.device, interface: Device1.interface) == nil)

        tokens.forEach { $0.cancel() }
        manager.stop()
        await fake.close()
        await client.close()
        bus.stop()
    }
}
