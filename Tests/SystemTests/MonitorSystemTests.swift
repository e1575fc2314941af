import BlueZ
import DBus
import DBusTestSupport
import Foundation
import HandoffProtocol
import Testing

/// handoffd's scan paths over the simulator (docs/e2e.md, "AdvertisementMonitor"):
/// with bluetoothd's experimental interfaces (`-E`) B listens with an
/// advertisement monitor, and an advertisement under our company ID that is no
/// handoff beacon never reaches it; without them B falls back to discovery and
/// hears (and rejects) it.
@Suite(.serialized) struct MonitorSystemTests {
    /// A broadcast under company 0xFFFF whose header byte (0x20: version 2) is none of ours, on hci2.
    static func stranger(on bus: PrivateBus) async throws -> DBusConnection {
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let data = LEAdvertisementData(manufacturerData: [0xFFFF: [0x20, 1, 2, 3, 4, 5]])
        let advertisement = try await LEAdvertisement1.export(data, at: "/stranger/adv0", on: connection) {}
        try await LEAdvertisingManager1.registerAdvertisement(advertisement.path, adapter: "/org/bluez/hci2", on: connection)
        return connection
    }

    /// A publishes; B lists it; then B's status after the stranger had time to be heard.
    static func run(_ laptops: TwoLaptops) async throws -> StatusResult {
        let stranger = try await Self.stranger(on: laptops.bus)
        let publisher = try await laptops.a.client()
        _ = try await publisher.call(.publish, PublishParams(type: TwoLaptops.type), as: PublishResult.self)
        let viewer = try await laptops.b.client(handles: [TwoLaptops.type])
        try await eventually {
            try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.count == 1
        }
        // The stranger is on the air before A's beacon, and re-heard every second (rescan).
        try await Task.sleep(for: .seconds(2))
        let status = try await viewer.call(.status, EmptyResult(), as: StatusResult.self)
        await stranger.close()
        return status
    }

    @Test func withTheMonitorBHearsAButNotTheStranger() async throws {
        let laptops = try await TwoLaptops(adapters: 3, simulatorArguments: ["--experimental"])
        let status = try await Self.run(laptops)
        #expect(status.scanPath == "monitor")
        #expect(status.scanning)
        #expect(status.beaconsRecognized > 0)
        #expect(status.beaconsRejected == 0, "the stranger's advertisement reached B")
        #expect(laptops.b.log.contains("scanning with an advertisement monitor on hci1"))
        #expect(!laptops.b.log.contains("scanning with filtered discovery instead"))

        // After bluetoothd restarts, B registers the monitor again.
        try await laptops.sim.restart(downtime: .milliseconds(300), graceful: true)
        try await eventually(within: .seconds(10)) {
            laptops.b.log.components(separatedBy: "scanning with an advertisement monitor on hci1").count == 3
        }
        let viewer = try await laptops.b.client(handles: [TwoLaptops.type])
        try await eventually { try await viewer.call(.status, EmptyResult(), as: StatusResult.self).scanPath == "monitor" }

        // B's adapter goes (bluetoothd releases the monitor) and comes back: the monitor again.
        try await laptops.sim.removeAdapter("hci1")
        try await laptops.sim.addAdapter("hci1")
        try await eventually(within: .seconds(10)) {
            laptops.b.log.components(separatedBy: "scanning with an advertisement monitor on hci1").count == 4
        }
        await laptops.stop()
    }

    /// The joiner hears the offer's pairing advertisement (header 0x30) through its monitor.
    @Test func pairingWorksThroughTheMonitor() async throws {
        let laptops = try await PairingSystemTests.Strangers(simulatorArguments: ["--experimental"])
        let reached = try await laptops.reachTheNumber()
        #expect(reached.offerNumber == reached.joinNumber)
        #expect(laptops.b.log.contains("scanning with an advertisement monitor on hci1"))
        await laptops.stop()
    }

    @Test func withoutTheManagerBFallsBackToDiscovery() async throws {
        let laptops = try await TwoLaptops(adapters: 3)
        let status = try await Self.run(laptops)
        #expect(status.scanPath == "discovery")
        #expect(status.beaconsRecognized > 0)
        #expect(status.beaconsRejected > 0, "B should have heard and rejected the stranger's advertisement")
        let log = laptops.b.log
        #expect(log.contains("bluetoothd offers no AdvertisementMonitorManager1"))
        #expect(log.components(separatedBy: "scanning with filtered discovery instead").count == 2, "logged once")
        await laptops.stop()
    }
}
