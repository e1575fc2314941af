import BlueZ
import DBus
import DBusTestSupport
import Testing

/// With `keepingInFull`, the mirror holds a device whose ManufacturerData the
/// predicate does not want compact (its identity, RSSI, ManufacturerData,
/// Connected, ServicesResolved): its advertisements and other changes must
/// still go where they went, and it is held in full once it carries wanted data.
@Suite(.serialized, .timeLimit(.minutes(1))) struct CompactDevicesTests {
    static let device = BlueZObjectManagerSignalTests.device
    /// Wanted: 0xFFFF data that starts with 0x10 (as handoff's beacons do).
    static let wanted: @Sendable (ManufacturerData) -> Bool = { $0[0xFFFF]?.first == 0x10 }

    static func data(_ first: UInt8) -> DBusValue {
        BlueZObjectManagerSignalTests.manufacturerData([(0xFFFF, .bytes([first, 2, 3]))])
    }

    /// A manager (with or without the predicate), what it heard, and the fake bluetoothd.
    static func start(keeping: Bool, on bus: PrivateBus) async throws
        -> (BlueZObjectManager, BlueZObjectManagerSignalTests.Heard, [ObserverToken], DBusConnection)
    {
        let client = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: client, keepingInFull: keeping ? Self.wanted : nil)
        let heard = BlueZObjectManagerSignalTests.Heard()
        let tokens = [
            manager.observe { event in heard.events.withLock { $0.append(event) } },
            manager.observeAdvertisements { advertisement in heard.advertisements.withLock { $0.append(advertisement) } },
        ]
        let fake = try await BlueZObjectManagerSignalTests.fake(on: bus)
        try await eventually { heard.advertisementCount == 1 }
        return (manager, heard, tokens, fake)
    }

    func device(_ manager: BlueZObjectManager) -> [String: DBusValue] {
        manager.properties(of: Self.device, interface: Device1.interface) ?? [:]
    }

    @Test(arguments: [false, true]) func aStrangersDeviceIsHeldCompact(keeping: Bool) async throws {
        let bus = try PrivateBus()
        let (manager, _, tokens, fake) = try await Self.start(keeping: keeping, on: bus)
        #expect(manager.compactDeviceCount == (keeping ? 1 : 0))
        #expect(device(manager)["Address"] == .string("00:AA:01:00:00:20"))
        #expect(device(manager)["AddressType"] == .string("random"))
        #expect(device(manager)["Name"] == (keeping ? nil : .string("before")))
        #expect(manager.devices(on: "/org/bluez/hci0").map(\.address) == ["00:AA:01:00:00:20"])
        #expect(manager.objects.keys.contains(Self.device))
        // Gone with its Device1.
        try fake.emitSignal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesRemoved",
            [.objectPath(Self.device), .strings([Device1.interface])])
        try await eventually { manager.properties(of: Self.device, interface: Device1.interface) == nil }
        #expect(manager.compactDeviceCount == 0)
        tokens.forEach { $0.cancel() }
        manager.stop()
        await fake.close()
        bus.stop()
    }

    @Test func aCompactDeviceIsHeldInFullOnceItCarriesWantedData() async throws {
        let bus = try PrivateBus()
        let (manager, heard, tokens, fake) = try await Self.start(keeping: true, on: bus)
        // A stranger's data (only ever in PropertiesChanged, as bluetoothd sends it): still compact.
        try BlueZObjectManagerSignalTests.changed(fake, ["ManufacturerData": Self.data(0x00), "RSSI": .int16(-50)])
        try await eventually { heard.lastAdvertisement?.rssi == -50 }
        #expect(heard.lastAdvertisement?.manufacturerData[0xFFFF] == [0x00, 2, 3])
        #expect(manager.compactDeviceCount == 1)
        #expect(device(manager)["RSSI"] == .int16(-50))
        // Wanted data: reported, and held in full from now on.
        try BlueZObjectManagerSignalTests.changed(fake, ["ManufacturerData": Self.data(0x10), "RSSI": .int16(-51)])
        try await eventually { heard.lastAdvertisement?.rssi == -51 }
        #expect(heard.lastAdvertisement?.manufacturerData[0xFFFF] == [0x10, 2, 3])
        #expect(manager.compactDeviceCount == 0)
        #expect(device(manager)["ManufacturerData"] == Self.data(0x10))
        try BlueZObjectManagerSignalTests.changed(fake, ["Name": .string("after"), "RSSI": .int16(-52)])
        try await eventually { device(manager)["Name"] == .string("after") }
        #expect(device(manager)["RSSI"] == .int16(-52))
        #expect(device(manager)["Address"] == .string("00:AA:01:00:00:20"))
        // Stranger's data again: it stays in full.
        try BlueZObjectManagerSignalTests.changed(fake, ["ManufacturerData": Self.data(0x00), "RSSI": .int16(-53)])
        try await eventually { heard.lastAdvertisement?.rssi == -53 }
        #expect(manager.compactDeviceCount == 0)
        tokens.forEach { $0.cancel() }
        manager.stop()
        await fake.close()
        bus.stop()
    }

    @Test func otherChangesOfACompactDeviceStillGoToObservers() async throws {
        let bus = try PrivateBus()
        let (manager, heard, tokens, fake) = try await Self.start(keeping: true, on: bus)
        try BlueZObjectManagerSignalTests.changed(fake, ["Connected": .boolean(true), "Name": .string("x")])
        try await eventually { heard.deviceChanges.contains(["Connected", "Name"]) }
        let current = heard.events.withLock { events -> [String: DBusValue]? in
            guard case .propertiesChanged(_, _, _, _, let current)? = events.last else { return nil }
            return current
        }
        #expect(current?["Connected"] == .boolean(true))
        #expect(manager.devices(on: "/org/bluez/hci0").first?.connected == true)
        #expect(manager.compactDeviceCount == 1)
        // The general path's advertisement (RSSI beside another property) reaches advertisement observers.
        try BlueZObjectManagerSignalTests.changed(fake, ["RSSI": .int16(-60), "TxPower": .int16(3)])
        try await eventually { heard.lastAdvertisement?.rssi == -60 }
        try BlueZObjectManagerSignalTests.changed(fake, ["ServicesResolved": .boolean(true)])
        try await eventually { device(manager)["ServicesResolved"] == .boolean(true) }
        #expect(manager.compactDeviceCount == 1)
        // Another interface on the device's object: held in full.
        try fake.emitSignal(
            path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
            [
                .objectPath(Self.device),
                .array(
                    element: .dictEntry(key: .string, value: BlueZObjectManagerSignalTests.properties),
                    [.dictEntry(.string("org.bluez.Battery1"), .vardict(["Percentage": .byte(50)]))]),
            ])
        try await eventually { manager.compactDeviceCount == 0 }
        #expect(device(manager)["Connected"] == .boolean(true))
        #expect(device(manager)["RSSI"] == .int16(-60))
        #expect(manager.properties(of: Self.device, interface: "org.bluez.Battery1")?["Percentage"] == .byte(50))
        tokens.forEach { $0.cancel() }
        manager.stop()
        await fake.close()
        bus.stop()
    }
}
