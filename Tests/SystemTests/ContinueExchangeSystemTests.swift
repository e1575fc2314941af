import BlueZ
import DBus
import DBusTestSupport
import Foundation
import HandoffKit
import HandoffProtocol
import Synchronization
import Testing

/// The continuation exchange between two real handoffds on the simulated air:
/// payload sizes up to the 3 KB limit, devices of another account and strangers
/// on the air, an origin that cannot be connected to, and cancellation.
@Suite(.serialized) struct ContinueExchangeSystemTests {
    /// A userInfo whose compact JSON is exactly `bytes` long: `{"blob":"xxx…"}`.
    static func userInfo(ofJSONLength bytes: Int) -> [String: JSONValue] {
        ["blob": .string(String(repeating: "x", count: bytes - 11))]
    }

    /// Publishes on A, waits until B hears it, and returns B's nearby activity.
    static func publish(
        _ activity: UserActivity, on laptops: TwoLaptops, seenBy viewer: HandoffClient
    ) async throws -> NearbyActivity {
        try await activity.becomeCurrent()
        try await eventually { try await viewer.list().count == 1 }
        return try await viewer.list()[0]
    }

    /// Publishes a webpage activity on A and returns it as B's reader sees it. It stays
    /// published while the returned activity and publisher live.
    static func publishWebpage(_ title: String, _ url: String, on laptops: TwoLaptops) async throws
        -> (publisher: HandoffClient, activity: UserActivity, reader: HandoffClient, nearby: NearbyActivity)
    {
        let publisher = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: publisher)
        activity.title = title
        activity.webpageURL = URL(string: url)
        let reader = HandoffClient(configuration: .init(app: "org.handoff.test.reader", socketPath: laptops.b.socket))
        return (publisher, activity, reader, try await publish(activity, on: laptops, seenBy: reader))
    }

    /// The link: bluetoothd's default (MTU 517, three ATT bearers), or the smallest MTU
    /// with notifications overtaking each other on three bearers.
    static let links: [[String]] = [[], ["--att-mtu", "23", "--att-channels", "3", "--latency-ms", "1-15"]]

    @Test(arguments: [100, 3072], links)
    func aPayloadRoundTripsWhole(userInfoBytes: Int, link: [String]) async throws {
        let laptops = try await TwoLaptops(simulatorArguments: link)
        let publisher = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: publisher)
        activity.title = "Payload of \(userInfoBytes) bytes"
        activity.userInfo = Self.userInfo(ofJSONLength: userInfoBytes)
        activity.requiredUserInfoKeys = ["blob"]
        let notices = Mutex<[WasContinuedEvent]>([])
        let listener = Task {
            for await notice in activity.wasContinuedEvents() { notices.withLock { $0.append(notice) } }
        }
        let reader = HandoffClient(
            configuration: .init(app: "org.handoff.test.reader", handles: [TwoLaptops.type], socketPath: laptops.b.socket))
        let nearby = try await Self.publish(activity, on: laptops, seenBy: reader)

        let started = ContinuousClock.now
        let restored = try await reader.continue(nearby, timeout: .seconds(10))
        print("continue of a \(userInfoBytes)-byte userInfo took \(ContinuousClock.now - started) on the simulator \(link)")
        #expect(restored.title == "Payload of \(userInfoBytes) bytes")
        #expect(restored.userInfo == Self.userInfo(ofJSONLength: userInfoBytes))
        #expect(restored.requiredUserInfoKeys == ["blob"])
        #expect(restored.type == TwoLaptops.type)
        try await eventually(within: .seconds(5)) { notices.withLock { $0.count == 1 } }
        #expect(notices.withLock { $0.first?.id } == activity.publishedID)
        // Cut to the link's MTU: at most MTU - 3 bytes a notification.
        let mtu = link.isEmpty ? 517 : 23
        #expect(laptops.a.log.contains("notifications, MTU \(mtu))"), "\(laptops.a.log)")
        // A second continuation right after the first (its link still going down) works too.
        let again = try await reader.continue(nearby, timeout: .seconds(10))
        #expect(again == restored)
        try await eventually(within: .seconds(5)) { notices.withLock { $0.count == 2 } }

        listener.cancel()
        await reader.close()
        await publisher.close()
        await laptops.stop()
    }

    /// A link that comes up but whose services never resolve (bluetoothd 5.66 once, on the VM
    /// rig) is kept until the timeout (disconnecting it made bluetoothd 5.66 exit there): the
    /// continue fails with `timeout`, saying what was missing, and the daemon goes on.
    @Test func aLinkWhoseServicesNeverResolveFailsAtTheTimeout() async throws {
        // A long expiry: the origin renews its advertisement (and address) only every 10 s.
        let laptops = try await TwoLaptops(
            expirySeconds: 30, simulatorArguments: ["--stall-discovery", "1", "--disconnect-delay", "0.2"])
        let (publisher, activity, reader, nearby) = try await Self.publishWebpage(
            "After a stalled link", "https://example.org/stalled", on: laptops)

        let error = await #expect(throws: ContinueError.self) {
            _ = try await reader.continue(nearby, timeout: .seconds(3))
        }
        #expect(error?.code == .timeout, "\(String(describing: error))")
        #expect(error?.message.contains("services were not found") == true, "\(String(describing: error))")
        // The next one gets a link of its own and works.
        let restored = try await reader.continue(nearby, timeout: .seconds(10))
        #expect(restored.title == "After a stalled link")

        await reader.close()
        withExtendedLifetime(activity) {}
        await publisher.close()
        await laptops.stop()
    }

    /// The link drops while the origin's notifications come (out of range for a moment):
    /// the continuing side notices at once, connects again and asks again, within the timeout.
    @Test func aLinkLostDuringTheResponseIsMadeAgain() async throws {
        let laptops = try await TwoLaptops(
            expirySeconds: 30, simulatorArguments: ["--att-mtu", "23", "--drop-link-after", "50", "--disconnect-delay", "0.2"])
        let publisher = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: publisher)
        activity.title = "Interrupted"
        activity.userInfo = Self.userInfo(ofJSONLength: 3072)
        let reader = HandoffClient(
            configuration: .init(app: "org.handoff.test.reader", handles: [TwoLaptops.type], socketPath: laptops.b.socket))
        let nearby = try await Self.publish(activity, on: laptops, seenBy: reader)

        let restored = try await reader.continue(nearby, timeout: .seconds(10))
        #expect(restored.title == "Interrupted")
        #expect(restored.userInfo == Self.userInfo(ofJSONLength: 3072))
        #expect(laptops.b.log.contains("dropped during the exchange): connecting again"), "\(laptops.b.log)")

        await reader.close()
        await publisher.close()
        await laptops.stop()
    }

    /// C has an account of the same name but another key: it never sees A's activity and
    /// cannot continue it. A stranger who connects to A and writes requests is refused with
    /// the status of docs/continuation.md, and A keeps serving B.
    @Test func anotherAccountAndStrangersCannotFetch() async throws {
        let laptops = try await TwoLaptops(adapters: 3)
        let c = try await DaemonProcess(bus: laptops.bus, name: "c", adapter: "hci2")
        let owner = try await c.client()
        _ = try await owner.call(.accountCreate, AccountNameParams(name: "me"), as: AccountInfo.self)
        let publisher = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: publisher)
        activity.title = "Private"
        activity.userInfo = ["secret": "s3cr3t-4711"]
        activity.webpageURL = URL(string: "https://example.org/private")
        let reader = HandoffClient(configuration: .init(app: "org.handoff.test.reader", socketPath: laptops.b.socket))
        let nearby = try await Self.publish(activity, on: laptops, seenBy: reader)

        // C hears A's beacons but cannot read them.
        try await eventually { try await owner.call(.status, EmptyResult(), as: StatusResult.self).beaconsRejected > 0 }
        #expect(try await owner.call(.list, EmptyResult(), as: ListResult.self).activities.isEmpty)
        let outcome = try await CtlProcess.run(
            ["continue", nearby.id, "--json", "--socket", c.socket], in: laptops.bus.directory)
        #expect(outcome.status == 1, "stderr: \(outcome.stderr)")
        #expect(outcome.stderr.contains("(not-found)"), "stderr: \(outcome.stderr)")
        #expect(outcome.stdout.isEmpty)

        // A stranger on hci2 connects to A's connectable advertisement and writes requests.
        let stranger = try await Stranger(bus: laptops.bus, adapter: "/org/bluez/hci2")
        let tag = Array(stranger.beacon[1..<5])
        let random = (0..<54).map { _ in UInt8.random(in: 0...255) }
        #expect(try await stranger.refusal(for: [0x10] + tag + random)?.contains("0x83") == true, "authenticationFailed")
        let unknown = try await stranger.refusal(for: [0x10, 1, 2, 3, 4] + random)
        #expect(unknown?.contains("0x82") == true, "unknownBeacon: \(unknown ?? "accepted")")
        let malformed = try await stranger.refusal(for: [0x10] + tag)
        #expect(malformed?.contains("0x81") == true, "malformed: \(malformed ?? "accepted")")
        await stranger.stop()

        // A still serves its own account.
        let restored = try await reader.continue(nearby, timeout: .seconds(10))
        #expect(restored.userInfo == ["secret": "s3cr3t-4711"])
        #expect(!laptops.a.log.contains("s3cr3t-4711"), "the payload never reaches the log")

        await reader.close()
        await publisher.close()
        _ = await c.terminate()
        await laptops.stop()
    }

    /// bluetoothd restarts on A: handoffd registers its GATT application again, and
    /// B continues as before.
    @Test func afterABluetoothdRestartTheOriginServesAgain() async throws {
        let laptops = try await TwoLaptops()
        let publisher = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: publisher)
        activity.title = "Survives"
        activity.webpageURL = URL(string: "https://example.org/survives")
        let reader = HandoffClient(configuration: .init(app: "org.handoff.test.reader", socketPath: laptops.b.socket))
        let nearby = try await Self.publish(activity, on: laptops, seenBy: reader)
        #expect(try await reader.continue(nearby, timeout: .seconds(10)).title == "Survives")

        try await laptops.sim.restart(downtime: .milliseconds(300), graceful: false)
        let log = { @Sendable in laptops.a.log.components(separatedBy: "continuation service registered on hci0").count - 1 }
        try await eventually(within: .seconds(10)) { log() == 2 }
        try await eventually(within: .seconds(15)) {
            guard let heard = try await reader.list().first else { return false }
            return (try? await reader.continue(heard, timeout: .seconds(3)))?.title == "Survives"
        }

        await reader.close()
        await publisher.close()
        await laptops.stop()
    }

    /// An origin that advertises non-connectably (`advertisement_type = "broadcast"`) is seen
    /// but cannot be connected to: out-of-range at the timeout, or cancelled before it.
    @Test func anOriginThatCannotBeConnectedToFailsCleanly() async throws {
        let laptops = try await TwoLaptops(originBluetoothSettings: #"advertisement_type = "broadcast""#)
        let (publisher, activity, reader, nearby) = try await Self.publishWebpage("Unreachable", "https://example.org/", on: laptops)

        let started = ContinuousClock.now
        let error = await #expect(throws: ContinueError.self) {
            _ = try await reader.continue(nearby, timeout: .seconds(2))
        }
        let took = ContinuousClock.now - started
        #expect(error?.code == .outOfRange, "\(String(describing: error))")
        #expect(took >= .seconds(2) && took < .seconds(5), "took \(took)")

        let outcome = try await CtlProcess.run(
            ["continue", nearby.id, "--timeout", "1", "--socket", laptops.b.socket], in: laptops.bus.directory)
        #expect(outcome.status != 0 && outcome.stderr.contains("(out-of-range)"), "stderr: \(outcome.stderr)")

        // Cancelled by the client: continue.cancel is sent, and the daemon keeps serving.
        let task = Task { try await reader.continue(nearby, timeout: .seconds(30)) }
        try await Task.sleep(for: .milliseconds(300))
        task.cancel()
        await #expect(throws: CancellationError.self) { _ = try await task.value }
        #expect(try await reader.list().count == 1)

        await reader.close()
        withExtendedLifetime(activity) {}
        await publisher.close()
        await laptops.stop()
    }
}

/// A BlueZ client that is not handoffd: it finds A's advertisement, connects and writes
/// whatever it likes to the request characteristic.
struct Stranger {
    let connection: DBusConnection
    let manager: BlueZObjectManager
    let device: DBusObjectPath
    let adapter: DBusObjectPath
    let request: DBusObjectPath
    /// The beacon A advertised, as heard.
    let beacon: [UInt8]

    init(bus: PrivateBus, adapter: DBusObjectPath) async throws {
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: connection)
        self.connection = connection
        self.manager = manager
        self.adapter = adapter
        try await Adapter1.setDiscoveryFilter(.handoff, adapter: adapter, on: connection)
        try await Adapter1.startDiscovery(adapter: adapter, on: connection)
        // A renews its advertisement (and its address) now and then: try the newest ones.
        let deadline = ContinuousClock.now + .seconds(15)
        while true {
            guard ContinuousClock.now < deadline else { throw TestFailure("could not connect to A") }
            let candidates = manager.devices(on: adapter).filter { $0.manufacturerData[0xFFFF]?.count == 24 }
            guard let candidate = candidates.last else {
                try await Task.sleep(for: .milliseconds(100))
                continue
            }
            do {
                try await Device1.connect(candidate.path, on: connection, timeout: .seconds(1))
                try await manager.waitForServicesResolved(candidate.path, timeout: .seconds(5))
            } catch {
                try? await Device1.disconnect(candidate.path, on: connection)
                continue
            }
            // The objects may follow ServicesResolved.
            let path = candidate.path
            let characteristic = try #require(
                await manager.first(within: Duration.seconds(5)) { () -> GattCharacteristic1? in
                    guard let service = manager.gattService(uuid: "7a955467-538c-4b86-9aa8-9ef63d05d0a7", of: path)
                    else { return nil }
                    return manager.gattCharacteristic(uuid: "608ea25e-3522-42f7-9392-b9b48ba74640", in: service.path)
                })
            device = candidate.path
            request = characteristic.path
            beacon = candidate.manufacturerData[0xFFFF] ?? []
            return
        }
    }

    /// Writes `value` (a write request); returns the error message, nil if A accepted it.
    func refusal(for value: [UInt8]) async throws -> String? {
        do {
            try await GattCharacteristic1.writeValue(request, value, type: .request, on: connection)
            return nil
        } catch let error as DBusError {
            return error.message
        }
    }

    func stop() async {
        try? await Device1.disconnect(device, on: connection)
        try? await Adapter1.removeDevice(device, adapter: adapter, on: connection)
        manager.stop()
        await connection.close()
    }
}
