import BlueZ
import DBus
import DBusTestSupport
import Synchronization
import Testing

/// The radio's advertisement monitor against a small fake bluetoothd that
/// orders things as the tests need: a tree still loading when the adapter is
/// announced, a monitor manager that comes after the adapter, and monitor calls
/// from somebody who is not bluetoothd.
@Suite(.serialized) struct LERadioMonitorTests {
    static let hci0: DBusObjectPath = "/org/bluez/hci0"
    static let properties = DBusType.array(.dictEntry(key: .string, value: .variant))
    static let interfaces = DBusType.array(.dictEntry(key: .string, value: properties))
    /// Where the radio exports its first monitor object (advertisement path's parent + /monitor).
    static let monitor0: DBusObjectPath = "/org/handoff/monitor/monitor0"

    /// What the fake was asked.
    struct Calls {
        var registerMonitor = 0
        var startDiscovery = 0
    }

    final class CallLog: Sendable {
        let state = Mutex(Calls())
        func withLock<T>(_ body: (inout Calls) -> T) -> T { state.withLock { body(&$0) } }
    }

    /// The fake bluetoothd: hci0 powered, with an AdvertisementMonitorManager1
    /// offering or_patterns unless `managerLater`. With `slowTree`, its
    /// `GetManagedObjects` announces hci0 by InterfacesAdded first and replies
    /// only once the radio has registered its monitor (or after 2 s): the
    /// radio's pass runs while the mirror's tree is still loading.
    final class FakeBluetoothd: Sendable {
        let connection: DBusConnection
        let calls = CallLog()

        init(on bus: PrivateBus, slowTree: Bool = false, managerLater: Bool = false) async throws {
            connection = try await DBusConnection.connect(to: .address(bus.address))
            let connection = self.connection
            let calls = self.calls
            let adapter = Self.adapterInterfaces(monitorManager: !managerLater)
            let objectManager = DBusInterface(
                "org.freedesktop.DBus.ObjectManager",
                methods: [
                    DBusMethod("GetManagedObjects", outputs: "a{oa{sa{sv}}}") { _ in
                        if slowTree {
                            try connection.emitSignal(
                                path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                                [.objectPath(LERadioMonitorTests.hci0), adapter])
                            for _ in 0..<200 where calls.withLock({ $0.registerMonitor == 0 }) {
                                try await Task.sleep(for: .milliseconds(10))
                            }
                        }
                        return [
                            .array(
                                element: .dictEntry(key: .objectPath, value: LERadioMonitorTests.interfaces),
                                [.dictEntry(.objectPath(LERadioMonitorTests.hci0), adapter)])
                        ]
                    }
                ])
            _ = try await connection.export("/", interfaces: [objectManager])
            let adapterMethods = DBusInterface(
                Adapter1.interface,
                methods: [
                    DBusMethod("SetDiscoveryFilter", inputs: "a{sv}") { _ in [] },
                    DBusMethod("StartDiscovery") { _ in
                        calls.withLock { $0.startDiscovery += 1 }
                        return []
                    },
                    DBusMethod("StopDiscovery") { _ in [] },
                ])
            let monitorManager = DBusInterface(
                AdvertisementMonitorManager1.interface,
                methods: [
                    DBusMethod("RegisterMonitor", inputs: "o") { _ in
                        // As bluetoothd: a second registration of the same application is refused.
                        let first = calls.withLock { calls in
                            calls.registerMonitor += 1
                            return calls.registerMonitor == 1
                        }
                        guard first else { throw DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Exists") }
                        return []
                    },
                    DBusMethod("UnregisterMonitor", inputs: "o") { _ in [] },
                ])
            _ = try await connection.export(LERadioMonitorTests.hci0, interfaces: [adapterMethods, monitorManager])
            _ = try await connection.requestName(BlueZ.serviceName, flags: [.doNotQueue])
        }

        static func adapterInterfaces(monitorManager: Bool) -> DBusValue {
            var entries: [DBusValue] = [
                .dictEntry(
                    .string(Adapter1.interface),
                    .vardict([
                        "Address": .string("00:AA:01:00:00:00"), "Powered": .boolean(true),
                        "Discovering": .boolean(false),
                    ])),
                .dictEntry(.string(LEAdvertisingManager1.interface), .vardict(["SupportedInstances": .byte(5)])),
            ]
            if monitorManager { entries.append(managerEntry) }
            return .array(element: .dictEntry(key: .string, value: LERadioMonitorTests.properties), entries)
        }

        static let managerEntry = DBusValue.dictEntry(
            .string(AdvertisementMonitorManager1.interface),
            .vardict(["SupportedMonitorTypes": .strings(["or_patterns"]), "SupportedFeatures": .strings([])]))

        /// Adds the monitor manager to hci0, as a bluetoothd that registers it after the adapter.
        func addManager() throws {
            try connection.emitSignal(
                path: "/", interface: "org.freedesktop.DBus.ObjectManager", member: "InterfacesAdded",
                [
                    .objectPath(LERadioMonitorTests.hci0),
                    .array(element: .dictEntry(key: .string, value: LERadioMonitorTests.properties), [Self.managerEntry]),
                ])
        }
    }

    static func laptop(_ bus: PrivateBus) async throws -> Laptop {
        try await Laptop(bus: bus, adapter: "hci0") {
            $0.monitorPatterns = [AdvertisementPattern(adType: 0xFF, content: [0xFF, 0xFF])]
        }
    }

    static func scanPath(_ laptop: Laptop) async -> ScanPath { await laptop.radio.status.scanPath }

    @Test func aMonitorRegisteredWhileTheTreeLoadsIsNotRegisteredAgain() async throws {
        let bus = try PrivateBus()
        // The radio waits for bluetoothd, which then starts (as after a restart).
        let laptop = try await Self.laptop(bus)
        try await eventually {
            if case .waitingForBluetoothd = await laptop.radio.status.phase { return true }
            return false
        }
        let fake = try await FakeBluetoothd(on: bus, slowTree: true)
        try await eventually { await Self.scanPath(laptop) == .monitor && laptop.manager.adapters().count == 1 }
        // The tree has arrived (serviceAppeared); let any pass it asks for run.
        try await Task.sleep(for: .milliseconds(300))
        #expect(fake.calls.withLock { $0.registerMonitor } == 1)
        #expect(fake.calls.withLock { $0.startDiscovery } == 0)
        #expect(await Self.scanPath(laptop) == .monitor)
        await laptop.stop()
        await fake.connection.close()
        bus.stop()
    }

    @Test func onlyBluetoothdCanReleaseTheMonitor() async throws {
        let bus = try PrivateBus()
        let fake = try await FakeBluetoothd(on: bus)
        let laptop = try await Self.laptop(bus)
        try await eventually { await Self.scanPath(laptop) == .monitor }
        // A local user calls Release on the radio's monitor: ignored.
        let stranger = try await DBusConnection.connect(to: .address(bus.address))
        try await stranger.call(
            destination: laptop.connection.uniqueName, path: Self.monitor0, interface: AdvertisementMonitor1.interface,
            member: "Release")
        try await Task.sleep(for: .milliseconds(300))
        #expect(await Self.scanPath(laptop) == .monitor)
        #expect(fake.calls.withLock { $0.startDiscovery } == 0)
        // bluetoothd's own Release is heard: the radio falls back to discovery.
        try await fake.connection.call(
            destination: laptop.connection.uniqueName, path: Self.monitor0, interface: AdvertisementMonitor1.interface,
            member: "Release")
        try await eventually { fake.calls.withLock { $0.startDiscovery } >= 1 }
        #expect(await Self.scanPath(laptop) == .discovery)
        await stranger.close()
        await laptop.stop()
        await fake.connection.close()
        bus.stop()
    }

    @Test func aMonitorManagerThatComesAfterTheAdapterIsUsed() async throws {
        let bus = try PrivateBus()
        let fake = try await FakeBluetoothd(on: bus, managerLater: true)
        let laptop = try await Self.laptop(bus)
        try await eventually { fake.calls.withLock { $0.startDiscovery } >= 1 }
        #expect(await Self.scanPath(laptop) == .discovery)
        try fake.addManager()
        try await eventually { await Self.scanPath(laptop) == .monitor }
        #expect(fake.calls.withLock { $0.registerMonitor } == 1)
        await laptop.stop()
        await fake.connection.close()
        bus.stop()
    }
}
