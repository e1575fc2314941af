import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Testing

/// One "laptop": its own bus connection, object-manager mirror and radio.
struct Laptop {
    let connection: DBusConnection
    let manager: BlueZObjectManager
    let radio: LERadio
    let task: Task<Void, Never>

    init(
        bus: PrivateBus, adapter: String, advertisementPath: DBusObjectPath = "/org/handoff/advertisement0",
        configure: (inout LERadio.Configuration) -> Void = { _ in }
    ) async throws {
        connection = try await DBusConnection.connect(to: .address(bus.address))
        manager = try await BlueZObjectManager.start(on: connection)
        var configuration = LERadio.Configuration()
        configuration.adapter = .name(adapter)
        configuration.advertisementPath = advertisementPath
        configure(&configuration)
        radio = LERadio(connection: connection, manager: manager, configuration: configuration)
        let radio = self.radio
        task = Task { await radio.run() }
    }

    func waitUntilReady() async throws {
        let radio = self.radio
        try await eventually {
            if case .ready = await radio.status.phase { return true }
            return false
        }
    }

    func stop() async {
        task.cancel()
        _ = await task.value
        manager.stop()
        await connection.close()
    }
}

@Suite(.serialized) struct LERadioTests {
    static let payloadA: [UInt8] = Array(0..<24)
    static let payloadB: [UInt8] = Array((0..<24).map { UInt8(200 - $0) })

    func report(_ payload: [UInt8]) -> @Sendable (ScanEvent) -> Bool {
        { event in
            if case .report(let report) = event { return report.data == payload }
            return false
        }
    }

    @Test func advertisesOnOneAdapterAndScansOnTheOther() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus)
        let a = try await Laptop(bus: bus, adapter: "hci0")
        let b = try await Laptop(bus: bus, adapter: "hci1")
        try await a.waitUntilReady()
        try await b.waitUntilReady()
        await a.radio.advertise(.broadcast(Self.payloadA))
        let event = try await firstMatch(b.radio.scanEvents, report(Self.payloadA))
        guard case .report(let report) = event else { return }
        #expect(report.companyID == 0xFFFF)
        #expect(report.adapter == "/org/bluez/hci1")
        #expect(report.device.isDescendant(of: "/org/bluez/hci1"))
        #expect(await a.radio.status.advertising)
        #expect(await b.radio.status.scanning)
        await a.stop()
        await b.stop()
        await sim.stop()
    }

    @Test func aRotatedPayloadIsSeen() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus)
        let a = try await Laptop(bus: bus, adapter: "hci0")
        let b = try await Laptop(bus: bus, adapter: "hci1")
        try await a.waitUntilReady()
        try await b.waitUntilReady()
        await a.radio.advertise(.broadcast(Self.payloadA))
        _ = try await firstMatch(b.radio.scanEvents, report(Self.payloadA))
        await a.radio.advertise(.broadcast(Self.payloadB))
        _ = try await firstMatch(b.radio.scanEvents, report(Self.payloadB))
        await a.stop()
        await b.stop()
        await sim.stop()
    }

    @Test func stopsAdvertisingWhenToldAndUnregistersOnShutdown() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus)
        let a = try await Laptop(bus: bus, adapter: "hci0")
        try await a.waitUntilReady()
        await a.radio.advertise(.broadcast(Self.payloadA))
        try await eventually { (try? await sim.activeInstances("hci0")) == 1 }
        await a.radio.advertise(nil)
        try await eventually { (try? await sim.activeInstances("hci0")) == 0 }
        #expect(await a.radio.status.advertising == false)
        await a.radio.advertise(.broadcast(Self.payloadA))
        try await eventually { (try? await sim.activeInstances("hci0")) == 1 }
        await a.stop()
        try await eventually { (try? await sim.activeInstances("hci0")) == 0 }
        await sim.stop()
    }

    /// Two slots are two advertising instances, each with its own object; a slot the
    /// adapter has no instance for is reported, and registered once one is free.
    @Test func eachSlotIsAnInstanceOfItsOwnAsFarAsTheAdapterHasThem() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--supported-instances", "2"])
        let a = try await Laptop(bus: bus, adapter: "hci0") { $0.retry = .init(first: .milliseconds(50), maximum: .milliseconds(200)) }
        let b = try await Laptop(bus: bus, adapter: "hci1")
        try await a.waitUntilReady()
        try await b.waitUntilReady()
        let payloadC = [UInt8](repeating: 7, count: 24)
        await a.radio.advertise([
            RadioAdvertisement(payload: Self.payloadA, type: .broadcast, slot: 0),
            RadioAdvertisement(payload: Self.payloadB, type: .broadcast, slot: 1),
        ])
        try await eventually { (try? await sim.activeInstances("hci0")) == 2 }
        _ = try await firstMatch(b.radio.scanEvents, report(Self.payloadB))
        #expect(await a.radio.status.advertisingSlots == [0, 1])
        // A third slot finds no free instance: the other two stay on the air, and status says why.
        await a.radio.advertise([
            RadioAdvertisement(payload: Self.payloadA, type: .broadcast, slot: 0),
            RadioAdvertisement(payload: Self.payloadB, type: .broadcast, slot: 1),
            RadioAdvertisement(payload: payloadC, type: .broadcast, slot: 2),
        ])
        try await eventually { await a.radio.status.slotErrors[2] != nil }
        #expect(await a.radio.status.slotErrors[2]?.contains("no free advertising instance") == true)
        #expect(await a.radio.status.advertisingSlots == [0, 1])
        // Slot 1 leaves: slot 2 gets its instance on a retry.
        await a.radio.advertise([
            RadioAdvertisement(payload: Self.payloadA, type: .broadcast, slot: 0),
            RadioAdvertisement(payload: payloadC, type: .broadcast, slot: 2),
        ])
        try await eventually { await a.radio.status.advertisingSlots == [0, 2] }
        _ = try await firstMatch(b.radio.scanEvents, report(payloadC))
        #expect(await a.radio.status.slotErrors.isEmpty)
        #expect(try await sim.activeInstances("hci0") == 2)
        await a.stop()
        try await eventually { (try? await sim.activeInstances("hci0")) == 0 }
        await b.stop()
        await sim.stop()
    }

    @Test func handlesReleaseAndRegistersAgain() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus)
        let a = try await Laptop(bus: bus, adapter: "hci0")
        try await a.waitUntilReady()
        await a.radio.advertise(.broadcast(Self.payloadA))
        try await eventually { await a.radio.status.advertising }
        // A graceful restart makes the simulator call Release, as bluetoothd does on SIGTERM.
        try await sim.restart(downtime: .milliseconds(300), graceful: true)
        try await eventually { (try? await sim.activeInstances("hci0")) == 1 }
        // The simulator counts the instance before its reply reaches the radio.
        try await eventually { await a.radio.status.advertising }
        await a.stop()
        await sim.stop()
    }

    @Test func theInstanceLimitGivesNotPermitted() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--supported-instances", "2"])
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        var adverts: [LEAdvertisement1] = []
        for index in 0..<3 {
            adverts.append(
                try await LEAdvertisement1.export(
                    LEAdvertisementData(manufacturerData: [0xFFFF: [UInt8(index)]]),
                    at: try DBusObjectPath("/test/adv\(index)"), on: connection, onRelease: {}))
        }
        try await LEAdvertisingManager1.registerAdvertisement(adverts[0].path, adapter: "/org/bluez/hci0", on: connection)
        try await LEAdvertisingManager1.registerAdvertisement(adverts[1].path, adapter: "/org/bluez/hci0", on: connection)
        let error = await #expect(throws: DBusError.self) {
            try await LEAdvertisingManager1.registerAdvertisement(
                adverts[2].path, adapter: "/org/bluez/hci0", on: connection)
        }
        #expect(error?.is(.bluezNotPermitted) == true)

        // The radio surfaces the same refusal as a clear error and keeps retrying.
        let a = try await Laptop(bus: bus, adapter: "hci0")
        await a.radio.advertise(.broadcast(Self.payloadA))
        try await eventually { await a.radio.status.lastError?.contains("no free advertising instance") == true }
        try await LEAdvertisingManager1.unregisterAdvertisement(adverts[0].path, adapter: "/org/bluez/hci0", on: connection)
        try await eventually(within: .seconds(15)) { await a.radio.status.advertising }
        await a.stop()
        await connection.close()
        await sim.stop()
    }

    @Test func resumesWithinTwoSecondsAfterBluetoothdRestarts() async throws {
        let bus = try PrivateBus()
        // The kernel's scan ends with the killed bluetoothd here (see the next tests for when it does not).
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--killed-scan-linger", "0"])
        let a = try await Laptop(bus: bus, adapter: "hci0")
        let b = try await Laptop(bus: bus, adapter: "hci1")
        try await a.waitUntilReady()
        try await b.waitUntilReady()
        await a.radio.advertise(.broadcast(Self.payloadA))
        _ = try await firstMatch(b.radio.scanEvents, report(Self.payloadA))

        let owners = try await b.connection.nameOwnerChanges(of: "org.bluez")
        try await sim.restart(downtime: .milliseconds(500), graceful: false)
        // Wait for org.bluez to come back, then expect a report within 2 s of that.
        var sawGone = false
        for try await owner in owners {
            if owner == nil { sawGone = true } else if sawGone { break }
        }
        let back = ContinuousClock.now
        _ = try await firstMatch(b.radio.scanEvents, within: .seconds(2), report(Self.payloadA))
        let elapsed = ContinuousClock.now - back
        #expect(elapsed < .seconds(2))
        #expect(await a.radio.status.advertising)
        #expect(await b.radio.status.scanning)
        await a.stop()
        await b.stop()
        await sim.stop()
    }

    /// After `kill -9 bluetoothd` the kernel may go on with the dead daemon's
    /// scan for up to 10.24 s: StartDiscovery is accepted and silently dropped,
    /// and the legacy controller refuses to advertise. The radio notices that
    /// Discovering never came and power-cycles the adapter, once.
    @Test func clearsTheScanAKilledBluetoothdLeftRunning() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--killed-scan-linger", "30"])
        let a = try await Laptop(bus: bus, adapter: "hci0") { $0.discoveryConfirmation = .milliseconds(500) }
        let b = try await Laptop(bus: bus, adapter: "hci1") { $0.discoveryConfirmation = .milliseconds(500) }
        try await a.waitUntilReady()
        try await b.waitUntilReady()
        await a.radio.advertise(.broadcast(Self.payloadA))
        _ = try await firstMatch(b.radio.scanEvents, report(Self.payloadA))

        try await sim.restart(downtime: .milliseconds(300), graceful: false)
        // New data, so that nothing heard before the restart counts. The kernel's
        // scans would last 30 s: hearing it within 10 s means both radios cleared them.
        await a.radio.advertise(.broadcast(Self.payloadB))
        _ = try await firstMatch(b.radio.scanEvents, within: .seconds(10), report(Self.payloadB))
        // A may be registering afresh after its own power cycle right now.
        try await eventually { await a.radio.status.advertising }
        try await eventually { await b.radio.status.phase == .ready("hci1") }
        #expect(await b.radio.status.scanning)
        await a.stop()
        await b.stop()
        await sim.stop()
    }

    /// Without leave to manage power, the radio does not power-cycle: it says
    /// why it is not scanning and tries again until the kernel's round ends.
    @Test func withoutPowerManagementWaitsOutAKilledBluetoothdsScan() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--killed-scan-linger", "2"])
        let b = try await Laptop(bus: bus, adapter: "hci1") {
            $0.discoveryConfirmation = .milliseconds(300)
            $0.powerOnAdapter = false
        }
        try await b.waitUntilReady()
        try await sim.restart(downtime: .milliseconds(200), graceful: false)
        try await eventually(within: .seconds(5)) {
            if case .failing(let why) = await b.radio.status.phase {
                return why.contains("did not start discovering") && why.contains("PowerOnAdapter")
            }
            return false
        }
        // It keeps trying, so once the kernel's round is over (2 s) the adapter discovers for it again.
        let control = sim.control
        try await eventually(within: .seconds(15)) {
            let reply = try await control.call(
                destination: "org.bluez", path: "/org/bluez/hci1", interface: "org.freedesktop.DBus.Properties",
                member: "Get", [.string("org.bluez.Adapter1"), .string("Discovering")])
            return try reply.decode(DBusValue.self) == .boolean(true)
        }
        try await eventually { await b.radio.status.phase == .ready("hci1") }
        #expect(await b.radio.status.scanning)
        await b.stop()
        await sim.stop()
    }

    @Test func waitsForARemovedAdapterAndResumesWhenItReturns() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus)
        let a = try await Laptop(bus: bus, adapter: "hci0")
        let b = try await Laptop(bus: bus, adapter: "hci1")
        try await a.waitUntilReady()
        try await b.waitUntilReady()
        await a.radio.advertise(.broadcast(Self.payloadA))
        _ = try await firstMatch(b.radio.scanEvents, report(Self.payloadA))

        try await sim.removeAdapter("hci0")
        try await eventually { await a.radio.status.phase == .waitingForAdapter }
        #expect(await a.radio.status.advertising == false)
        try await sim.addAdapter("hci0")
        try await a.waitUntilReady()
        try await eventually { await a.radio.status.advertising }
        _ = try await firstMatch(b.radio.scanEvents, report(Self.payloadA))
        await a.stop()
        await b.stop()
        await sim.stop()
    }
}
