import BlueZ
import DBus
import DBusTestSupport
import Foundation
import HandoffProtocol
import Logging
import Synchronization
import Testing

@testable import HandoffDaemon

/// `AddressPrivacyMonitor` with a real radio on the simulated BlueZ. The kernel's
/// answer is played by the test (this host's kernel has no Bluetooth): what is
/// checked is when the monitor asks, what type the advertisement object that
/// bluetoothd reads then has, and what is logged.
@Suite(.serialized) struct AddressPrivacyMonitorTests {
    /// Log lines at notice level and above.
    final class LogRecord: Sendable {
        let lines = Mutex<[String]>([])
        func count(containing text: String) -> Int { lines.withLock { $0.filter { $0.contains(text) }.count } }
    }

    struct RecordingHandler: LogHandler {
        let record: LogRecord
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            guard event.level >= .notice else { return }
            record.lines.withLock { $0.append("\(event.level) \(event.message)") }
        }
    }

    /// The `Type` of the advertisement object the radio exports, as bluetoothd reads it.
    /// Nil while the radio has not exported it (yet).
    static func exportedType(_ radio: LERadio, from observer: DBusConnection) async throws -> String? {
        guard let reply = try? await observer.call(
            destination: radio.connection.uniqueName, path: radio.configuration.advertisementPath,
            interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string("org.bluez.LEAdvertisement1"), .string("Type")])
        else { return nil }
        guard case .variant(.string(let type)) = reply.body.first else { return nil }
        return type
    }

    static let payload = [UInt8](0..<24)

    /// Applies each policy to the radio's advertisement of `payload`, as the daemon's advertiser does.
    static func applying(to radio: LERadio) -> @Sendable (AdvertisingPolicy) async -> Void {
        { policy in
            await radio.advertise(policy.advertise ? RadioAdvertisement(payload: payload, type: policy.type) : nil)
        }
    }

    /// A private bus, the simulator, and a radio on hci0 advertising 24 bytes.
    struct Rig {
        let bus: PrivateBus
        let sim: SimulatedBlueZ
        let connection: DBusConnection
        /// Reads what bluetoothd reads, from outside the radio.
        let observer: DBusConnection
        let manager: BlueZObjectManager
        let radio: LERadio
        let radioTask: Task<Void, Never>

        init(simulatorArguments: [String]) async throws {
            bus = try PrivateBus()
            sim = try await SimulatedBlueZ(bus: bus, arguments: simulatorArguments)
            connection = try await DBusConnection.connect(to: .address(bus.address))
            observer = try await DBusConnection.connect(to: .address(bus.address))
            manager = try await BlueZObjectManager.start(on: connection)
            var configuration = LERadio.Configuration()
            configuration.adapter = .name("hci0")
            let radio = LERadio(connection: connection, manager: manager, configuration: configuration)
            self.radio = radio
            radioTask = Task { await radio.run() }
            await radio.advertise(.broadcast(AddressPrivacyMonitorTests.payload))
        }

        func stop() async {
            radioTask.cancel()
            _ = await radioTask.value
            manager.stop()
            await connection.close()
            await observer.close()
            await sim.stop()
            bus.stop()
        }
    }

    @Test func followsTheKernelAcrossPowerCyclesAndBluetoothdRestarts() async throws {
        let rig = try await Rig(simulatorArguments: ["--extended-advertising"])
        let (sim, observer, radio) = (rig.sim, rig.observer, rig.radio)

        let kernel = Mutex<KernelPrivacy>(.known(.on))
        // Each question: the adapter asked about, and whether hci0 was powered then.
        let asked = Mutex<[(name: String, powered: Bool)]>([])
        let manager = rig.manager
        let record = LogRecord()
        let monitor = AddressPrivacyMonitor(
            manager: rig.manager, selector: .name("hci0"), configured: .peripheral,
            mainConfPath: "/nonexistent/main.conf",
            readKernel: { name in
                let powered = manager.adapters().first { $0.interfaceName == "hci0" }?.powered == true
                asked.withLock { $0.append((name, powered)) }
                return kernel.withLock { $0 }
            },
            logger: Logger(label: "test") { _ in RecordingHandler(record: record) }, apply: Self.applying(to: radio))
        let monitorTask = Task { await monitor.run() }

        // Privacy on: connectable.
        try await eventually { try await Self.exportedType(radio, from: observer) == "peripheral" }
        #expect(await monitor.availability?.state == "available")
        #expect(asked.withLock { $0.allSatisfy { $0.name == "hci0" } && !$0.isEmpty })

        // The kernel now says off (another bluetoothd set it): at the next power change the
        // monitor asks again and peripheral is refused; the advertisement is broadcast.
        kernel.withLock { $0 = .known(.off) }
        let before = asked.withLock { $0.count }
        try await Adapter1.setPowered(false, adapter: "/org/bluez/hci0", on: rig.connection)
        try await eventually { asked.withLock { $0.count } > before }
        try await eventually { try await Self.exportedType(radio, from: observer) == "broadcast" }
        let refused = try #require(await monitor.availability)
        #expect(refused.state == "unavailable" && refused.addressPrivacy == "off")
        #expect(refused.reason.hasPrefix("advertisement_type = \"peripheral\" refused"))
        // The radio powers it on again: asked again with hci0 powered (the off and on may
        // fold into one question under load), same state, not logged again.
        try await eventually { rig.manager.adapters().first { $0.interfaceName == "hci0" }?.powered == true }
        try await eventually { asked.withLock { $0.dropFirst(before).contains { $0.powered } } }
        #expect(record.count(containing: "refused") == 1, "\(record.lines.withLock { $0 })")
        #expect(record.lines.withLock { $0.last?.hasPrefix("error ") == true })

        // bluetoothd restarts with privacy on: asked again, connectable again, logged once.
        kernel.withLock { $0 = .known(.on) }
        try await sim.restart(downtime: .milliseconds(200), graceful: true)
        try await eventually(within: .seconds(15)) { try await Self.exportedType(radio, from: observer) == "peripheral" }
        try await eventually { await monitor.availability?.state == "available" }
        #expect(record.count(containing: "refused") == 1)

        monitorTask.cancel()
        _ = await monitorTask.value
        await rig.stop()
    }

    /// hci0's `ActiveInstances`, as bluetoothd reports it.
    static func activeInstances(from observer: DBusConnection) async throws -> UInt8? {
        let reply = try await observer.call(
            destination: "org.bluez", path: "/org/bluez/hci0", interface: "org.freedesktop.DBus.Properties",
            member: "Get", [.string(LEAdvertisingManager1.interface), .string("ActiveInstances")])
        guard case .variant(.byte(let count)) = reply.body.first else { return nil }
        return count
    }

    /// Privacy on and a controller with legacy advertising only (the simulator's
    /// default, as btvirt -L): one private address would span epochs. "strict"
    /// keeps the beacon off the air and says why; "warn" advertises and says so.
    @Test(arguments: [AddressPrivacyMode.strict, .warn])
    func legacyControllerWithPrivacy(mode: AddressPrivacyMode) async throws {
        let rig = try await Rig(simulatorArguments: [])
        let (observer, radio) = (rig.observer, rig.radio)
        let record = LogRecord()
        let monitor = AddressPrivacyMonitor(
            manager: rig.manager, selector: .name("hci0"), configured: nil, mode: mode,
            mainConfPath: "/nonexistent/main.conf", readKernel: { _ in .known(.on) },
            logger: Logger(label: "test") { _ in RecordingHandler(record: record) }, apply: Self.applying(to: radio))
        let monitorTask = Task { await monitor.run() }

        try await eventually { await monitor.availability != nil }
        let availability = try #require(await monitor.availability)
        switch mode {
        case .strict:
            #expect(availability.state == "unavailable")
            #expect(availability.reason.hasPrefix("not advertising: LE privacy is on, but hci0 has legacy advertising only"))
            #expect(availability.fix?.contains("address_privacy = \"warn\"") == true)
            #expect(record.count(containing: "not advertising") == 1)
            // It stays off: nothing registered while the radio keeps scanning.
            try await eventually { await radio.wanted.isEmpty }
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await Self.activeInstances(from: observer) == 0)
            #expect(try await Self.exportedType(radio, from: observer) == nil)
        case .warn:
            #expect(availability.state == "available")
            #expect(availability.reason.contains("would link this device's beacons of consecutive epochs"))
            try await eventually { try await Self.exportedType(radio, from: observer) == "peripheral" }
            try await eventually { try await Self.activeInstances(from: observer) == 1 }
            #expect(record.lines.withLock { $0.contains { $0.hasPrefix("warning ") } })
        }

        monitorTask.cancel()
        _ = await monitorTask.value
        await rig.stop()
    }
}
