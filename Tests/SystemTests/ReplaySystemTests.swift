import BlueZ
import DBus
import DBusTestSupport
import Foundation
import HandoffProtocol
import Synchronization
import Testing

/// Issue 19 over the simulated BlueZ: a stranger (hci2, no account key, no handoffd)
/// records A's beacons off the air and, once A has stopped, advertises A's newest
/// beacon from its own adapter, as the simulator carries any adapter's advertisement.
@Suite(.serialized) struct ReplaySystemTests {
    @Test func aCopiedBeaconDoesNotKeepADepartedLaptopsActivityListed() async throws {
        let laptops = try await TwoLaptops(adapters: 3)
        let recorder = try await Recorder(bus: laptops.bus, adapter: "/org/bluez/hci2")
        let watcher = try await laptops.b.client(handles: [TwoLaptops.type])
        _ = try await watcher.call(.subscribe, SubscribeParams(), as: EmptyResult.self)
        let publisher = try await laptops.a.client()
        _ = try await publisher.call(.publish, PublishParams(type: TwoLaptops.type), as: PublishResult.self)
        let (event, activity) = try await watcher.nextEvent()
        #expect(event == .appeared)
        try await Task.sleep(for: .seconds(2.5))  // A renews every second (expiry 3 s)
        let before = try await watcher.call(.status, EmptyResult(), as: StatusResult.self)
        #expect(before.beaconCopiesRefused == 0)

        // A stops: its advertisement goes with its client.
        let stopped = ContinuousClock.now
        publisher.close()
        try await eventually { try await laptops.sim.activeInstances("hci0") == 0 }
        let newest = try #require(recorder.newest, "the stranger heard none of A's beacons")
        try await recorder.advertise(newest)
        #expect(try await laptops.sim.activeInstances("hci2") == 1)

        let expiry = Duration.seconds(3)
        let renewal = Duration.seconds(1)
        var lost = false
        while !lost {
            let (event, gone) = try await watcher.nextEvent(timeout: expiry + renewal + .seconds(2))
            lost = event == .lost && gone.id == activity.id
        }
        let listedFor = ContinuousClock.now - stopped
        print("a copied beacon on hci2: B dropped A \(listedFor) after A stopped")
        #expect(listedFor <= expiry + renewal + .milliseconds(500), "B listed A \(listedFor) after it stopped")
        let after = try await watcher.call(.status, EmptyResult(), as: StatusResult.self)
        #expect((after.beaconCopiesRefused ?? 0) >= 2, "copies: \(String(describing: after.beaconCopiesRefused))")
        #expect(after.beaconsRejected == before.beaconsRejected, "a copy is not a stranger's beacon")
        // The stranger is still on the air, and B lists nothing.
        #expect(try await laptops.sim.activeInstances("hci2") == 1)
        #expect(try await watcher.call(.list, EmptyResult(), as: ListResult.self).activities.isEmpty)
        await recorder.stop()
        await laptops.stop()
    }
}

/// A device without the account key: it scans on its adapter, keeps the newest
/// distinct Manufacturer Specific Data (company 0xFFFF, 24 bytes) it heard, and can
/// advertise any bytes from its own adapter.
final class Recorder: Sendable {
    let connection: DBusConnection
    let manager: BlueZObjectManager
    let adapter: DBusObjectPath
    private final class Heard: Sendable { let newest = Mutex<[UInt8]?>(nil) }
    private let heard = Heard()
    private let token = Mutex<ObserverToken?>(nil)

    init(bus: PrivateBus, adapter: DBusObjectPath) async throws {
        connection = try await DBusConnection.connect(to: .address(bus.address))
        manager = try await BlueZObjectManager.start(on: connection)
        self.adapter = adapter
        let token = manager.observeAdvertisements { [heard] advertisement in
            guard advertisement.adapter == adapter, let data = advertisement.manufacturerData[0xFFFF], data.count == 24
            else { return }
            heard.newest.withLock { $0 = data }
        }
        self.token.withLock { $0 = token }
        try await Adapter1.setDiscoveryFilter(.handoff, adapter: adapter, on: connection)
        try await Adapter1.startDiscovery(adapter: adapter, on: connection)
    }

    /// The payload heard last.
    var newest: [UInt8]? { heard.newest.withLock { $0 } }

    /// Advertises `payload` (non-connectable) from the recorder's adapter.
    func advertise(_ payload: [UInt8]) async throws {
        token.withLock { $0?.cancel() }
        let advertisement = try await LEAdvertisement1.export(
            LEAdvertisementData(type: .broadcast, manufacturerData: [0xFFFF: payload]), at: "/org/handoff/replay/adv",
            on: connection, onRelease: {})
        try await LEAdvertisingManager1.registerAdvertisement(advertisement.path, adapter: adapter, on: connection)
    }

    func stop() async {
        token.withLock { $0?.cancel() }
        await connection.close()
    }
}
