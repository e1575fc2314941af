import BlueZ
import DBus
import DBusTestSupport
import Synchronization
import Testing

/// The mirror against a minimal fake bluetoothd whose `GetManagedObjects`
/// answers with a snapshot that a signal has already overtaken.
@Suite(.serialized) struct BlueZObjectManagerTests {
    static let hci0: DBusObjectPath = "/org/bluez/hci0"
    static let properties = DBusType.array(.dictEntry(key: .string, value: .variant))
    static let interfaces = DBusType.array(.dictEntry(key: .string, value: properties))

    static func adapter(powered: Bool) -> DBusValue {
        .array(
            element: .dictEntry(key: .string, value: properties),
            [.dictEntry(.string(Adapter1.interface), .vardict(["Powered": .boolean(powered), "Address": .string("00:AA:01:00:00:00")]))])
    }

    /// The fake: on `GetManagedObjects` it replies with hci0 unpowered, and
    /// signals `Powered` true either just before (`signalFirst`) or just after
    /// the reply. Either way the signal is the newer word.
    static func fakeBluetoothd(on bus: PrivateBus, signalFirst: Bool) async throws -> DBusConnection {
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let signal: @Sendable () throws -> Void = {
            try connection.emitSignal(
                path: hci0, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                [.string(Adapter1.interface), .vardict(["Powered": .boolean(true)]), .strings([])])
        }
        // As bluetoothd: the adapter is announced (unpowered until AutoEnable) before anything else
        // about it. The mirror asks for the snapshot as soon as the name has an owner, which can be
        // before this task goes on after `requestName`: whichever comes first announces it, so the
        // announcement is always older than the snapshot and the signal (it was not, once, in a CI
        // run, and the snapshot then rightly lost to it).
        let announced = Mutex(false)
        let announce: @Sendable () throws -> Void = {
            try announced.withLock { done in
                guard !done else { return }
                try connection.emitSignal(
                    path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                    [.objectPath(hci0), adapter(powered: false)])
                done = true
            }
        }
        let manager = DBusInterface(
            "org.freedesktop.DBus.ObjectManager",
            methods: [
                DBusMethod("GetManagedObjects", outputs: "a{oa{sa{sv}}}") { _ in
                    try announce()
                    if signalFirst {
                        try signal()
                    } else {
                        Task {
                            try await Task.sleep(for: .milliseconds(1))
                            try signal()
                        }
                    }
                    return [.array(element: .dictEntry(key: .objectPath, value: interfaces), [.dictEntry(.objectPath(hci0), adapter(powered: false))])]
                }
            ])
        _ = try await connection.export("/", interfaces: [manager])
        // As bluetoothd: the name first, then the adapter.
        _ = try await connection.requestName(BlueZ.serviceName, flags: [.doNotQueue])
        try announce()
        return connection
    }

    @Test(arguments: [true, false]) func aSignalNewerThanTheSnapshotWins(signalFirst: Bool) async throws {
        let bus = try PrivateBus()
        let client = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: client)
        let fake = try await Self.fakeBluetoothd(on: bus, signalFirst: signalFirst)
        try await eventually { manager.isServicePresent && manager.adapters().count == 1 }
        // Let any late snapshot merge and signal land.
        try await Task.sleep(for: .milliseconds(200))
        #expect(manager.adapters().first?.powered == true)
        manager.stop()
        await fake.close()
        await client.close()
        bus.stop()
    }
}
