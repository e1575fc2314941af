import DBusTestSupport
import Foundation
import HandoffCore
import Testing

@testable import HandoffDaemon

/// Devices meeting (docs/devices.md): B hears A's beacon, introduces itself over the
/// loopback link with the real sealed exchange, and names A's activity; both list each other.
@Suite(.timeLimit(.minutes(1))) struct DaemonDevicesTests {
    static let type = "org.example.reading"

    /// A ("Ada's ThinkPad") and B ("Ada's desktop") share account "home", advertising
    /// connectably as with LE privacy on: the beacons say `reachable`, so B introduces itself.
    static func named() async throws -> DaemonNearbyTests.Pair {
        var a = DaemonRig.settings
        a.deviceName = "Ada's ThinkPad"
        var b = DaemonRig.settings
        b.deviceName = "Ada's desktop"
        let pair = try await DaemonNearbyTests.Pair(bHandles: [type], settings: a, bSettings: b)
        for rig in [pair.a, pair.b] {
            await rig.daemon.apply(AdvertisingPolicy(advertise: true, type: .peripheral, availability: nil))
        }
        return pair
    }

    static func devices(_ client: TestClient) async throws -> [[String: Any]] {
        try #require(try await client.call("devices")["devices"] as? [[String: Any]])
    }

    @Test func theDevicesMeetOnceAndNameEachOther() async throws {
        let rig = try await Self.named()
        try await rig.bClient.call("subscribe")
        try await rig.aClient.call("publish", ["type": Self.type, "title": "Chapter 3"])
        _ = try await rig.bClient.event("appeared")
        let named = try await rig.bClient.event("updated") { ($0["activity"] as? [String: Any])?["deviceName"] != nil }
        let activity = try #require(named["activity"] as? [String: Any])
        #expect(activity["deviceName"] as? String == "Ada's ThinkPad")
        let fingerprint = try #require(activity["deviceFingerprint"] as? String)
        #expect(fingerprint.count == 16)
        let listed = try #require(try await rig.bClient.call("list")["activities"] as? [[String: Any]])
        #expect(listed.first?["deviceName"] as? String == "Ada's ThinkPad")

        // B: itself, then A, nearby.
        let onB = try await Self.devices(rig.bClient)
        #expect(onB.map { $0["name"] as? String } == ["Ada's desktop", "Ada's ThinkPad"])
        #expect(onB.map { $0["thisDevice"] as? Bool } == [true, false])
        #expect(onB[1]["nearby"] as? Bool == true)
        #expect(onB[1]["fingerprint"] as? String == fingerprint)
        #expect(onB[1]["lastHeard"] != nil)
        // A learned B from the introduction's request.
        let onA = try await Self.devices(rig.aClient)
        #expect(onA.map { $0["name"] as? String } == ["Ada's ThinkPad", "Ada's desktop"])
        #expect(onA[0]["fingerprint"] as? String == fingerprint)

        // One exchange: a new activity of A is named from the roster, without another.
        let written = rig.b.link!.written.withLock { $0 }
        #expect(written == 1)
        try await rig.aClient.call("publish", ["type": "org.example.other", "title": "Other"])
        try await eventually {
            let listed = try await rig.bClient.call("list")["activities"] as? [[String: Any]] ?? []
            return listed.contains { $0["typeHash"] != nil && $0["type"] == nil && $0["deviceName"] as? String == "Ada's ThinkPad" }
        }
        #expect(rig.b.link!.written.withLock { $0 } == written)
        await rig.stop()
    }

    /// With `introductionDelay` (10 s in handoffd), B waits that long after it first heard A before it
    /// introduces itself: one timer for every pending introduction, not a task each.
    @Test func aDelayedIntroductionWaitsItsDelay() async throws {
        var a = DaemonRig.settings
        a.deviceName = "Ada's ThinkPad"
        var b = DaemonRig.settings
        b.deviceName = "Ada's desktop"
        b.introductionDelay = .milliseconds(600)
        let rig = try await DaemonNearbyTests.Pair(bHandles: [Self.type], settings: a, bSettings: b)
        for side in [rig.a, rig.b] {
            await side.daemon.apply(AdvertisingPolicy(advertise: true, type: .peripheral, availability: nil))
        }
        try await rig.bClient.call("subscribe")
        try await rig.aClient.call("publish", ["type": Self.type, "title": "Chapter 3"])
        _ = try await rig.bClient.event("appeared")
        let heard = ContinuousClock.now
        try await Task.sleep(for: .milliseconds(300))
        #expect(rig.b.link!.written.withLock { $0 } == 0)
        let named = try await rig.bClient.event("updated") { ($0["activity"] as? [String: Any])?["deviceName"] != nil }
        #expect(ContinuousClock.now - heard >= .milliseconds(500))
        #expect((named["activity"] as? [String: Any])?["deviceName"] as? String == "Ada's ThinkPad")
        #expect(rig.b.link!.written.withLock { $0 } == 1)
        await rig.stop()
    }

    @Test func aDeviceOfAnotherAccountLearnsNothing() async throws {
        let rig = try await Self.named()
        let stranger = try await DaemonRig("c", air: rig.air, registry: rig.registry)
        let strangerClient = try await stranger.client(handles: [Self.type])
        try await strangerClient.call("account.create", ["name": "home"])
        try await rig.aClient.call("publish", ["type": Self.type])
        try await eventually { (try await rig.bClient.call("list")["activities"] as? [Any])?.count == 1 }
        #expect((try await strangerClient.call("list")["activities"] as? [Any])?.isEmpty == true)
        let onStranger = try await Self.devices(strangerClient)
        #expect(onStranger.count == 1)
        #expect(stranger.link!.written.withLock { $0 } == 0)
        await stranger.stop()
        await rig.stop()
    }

    @Test func aBroadcastingDeviceIsNotAskedItsName() async throws {
        let rig = try await Self.named()
        await rig.a.daemon.apply(AdvertisingPolicy(advertise: true, type: .broadcast, availability: nil))
        try await rig.bClient.call("subscribe")
        try await rig.aClient.call("publish", ["type": Self.type])
        _ = try await rig.bClient.event("appeared")
        try await Task.sleep(for: .milliseconds(300))
        #expect(rig.b.link!.written.withLock { $0 } == 0)
        let listed = try #require(try await rig.bClient.call("list")["activities"] as? [[String: Any]])
        #expect(listed.first?["deviceName"] == nil)
        await rig.stop()
    }

    /// `[device] introduce = false` on B: B does not introduce itself to A, and A's name
    /// stays unknown on B until A, which still introduces itself, hears B and meets it.
    @Test func aDeviceThatDoesNotIntroduceItselfIsStillMetByOneThatDoes() async throws {
        var a = DaemonRig.settings
        a.deviceName = "Ada's ThinkPad"
        var b = DaemonRig.settings
        b.deviceName = "Ada's desktop"
        b.introductions = false
        let rig = try await DaemonNearbyTests.Pair(aHandles: [Self.type], bHandles: [Self.type], settings: a, bSettings: b)
        for side in [rig.a, rig.b] {
            await side.daemon.apply(AdvertisingPolicy(advertise: true, type: .peripheral, availability: nil))
        }
        try await rig.bClient.call("subscribe")
        try await rig.aClient.call("publish", ["type": Self.type])
        _ = try await rig.bClient.event("appeared")
        try await Task.sleep(for: .milliseconds(300))
        #expect(rig.b.link!.written.withLock { $0 } == 0)
        #expect(try await Self.devices(rig.bClient).count == 1)

        // B publishes: A introduces itself, and both know each other.
        try await rig.bClient.call("publish", ["type": Self.type])
        try await eventually { try await Self.devices(rig.bClient).count == 2 }
        #expect(rig.a.link!.written.withLock { $0 } == 1)
        #expect(rig.b.link!.written.withLock { $0 } == 0)
        #expect(try await Self.devices(rig.bClient).map { $0["name"] as? String } == ["Ada's desktop", "Ada's ThinkPad"])
        await rig.stop()
    }

    @Test func theDevicesResultHasOnlyTheCallersAccounts() async throws {
        let rig = try await Self.named()
        let other = try await rig.a.client(uid: 1001, app: "someone-else")
        #expect(try await Self.devices(other).isEmpty)
        await rig.stop()
    }
}
