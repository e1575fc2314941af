import BlueZ
import Foundation
import HandoffCore
import DBusTestSupport
import Testing

@testable import HandoffDaemon

/// Two daemons of one account on a fake air: a beacon heard becomes a nearby
/// entry and an event for the subscribed clients that may see it.
@Suite(.timeLimit(.minutes(1))) struct DaemonNearbyTests {
    /// Laptops A and B sharing account "home" (uid 1000 on both), on one air.
    struct Pair {
        let air = FakeAir()
        let registry = LoopbackLink.Registry()
        let a: DaemonRig
        let b: DaemonRig
        let aClient: TestClient
        let bClient: TestClient

        init(aHandles: [String] = [], bHandles: [String] = [], settings: DaemonSettings = DaemonRig.settings) async throws {
            a = try await DaemonRig("a", air: air, registry: registry, settings: settings)
            b = try await DaemonRig("b", air: air, registry: registry, settings: settings)
            aClient = try await a.client(app: "origin-app", handles: aHandles)
            bClient = try await b.client(app: "other-app", handles: bHandles)
            try await aClient.call("account.create", ["name": "home"])
            let code = try #require(try await aClient.call("account.export", ["name": "home"])["code"] as? String)
            try await bClient.call("account.import", ["code": code, "name": "home"])
        }

        func stop() async {
            await a.stop()
            await b.stop()
        }
    }

    @Test func aRecognisedBeaconBecomesAnEntryAndAnEventForSubscribers() async throws {
        let pair = try await Pair(bHandles: ["org.example.reading"])
        try await pair.bClient.call("subscribe")
        let unsubscribed = try await pair.b.client(app: "quiet")
        try await pair.aClient.call("publish", ["type": "org.example.reading", "title": "Chapter 3"])

        let appeared = try await pair.bClient.event("appeared")
        let activity = try #require(appeared["activity"] as? [String: Any])
        #expect(activity["type"] as? String == "org.example.reading")
        #expect(activity["account"] as? String == "home")
        let listed = try #require(try await pair.bClient.call("list")["activities"] as? [[String: Any]])
        #expect(listed.map { $0["id"] as? String } == [activity["id"] as? String])
        #expect(try await pair.bClient.call("status")["beaconsRecognized"] as? Int == 1)
        // Not subscribed: nothing.
        #expect(unsubscribed.eventNames.isEmpty)
        // A's own beacon, heard back (a relay, a second adapter), is not an activity of A's.
        let own = try #require(await pair.a.radio.onAir?.payload)
        pair.a.radio.hear(own, from: "/org/bluez/hci0/dev_echo")
        let before = try await pair.aClient.call("status")["beaconsRejected"] as? Int
        pair.a.radio.hear([0x10], from: "/org/bluez/hci0/dev_echo")  // a marker: once counted, the echo was handled
        try await eventually { try await pair.aClient.call("status")["beaconsRejected"] as? Int == (before ?? 0) + 1 }
        #expect((try await pair.aClient.call("list")["activities"] as? [Any])?.isEmpty == true)
        #expect(try await pair.aClient.call("status")["beaconsRecognized"] as? Int == 0)
        await pair.stop()
    }

    @Test func anotherUsersClientNeitherListsNorHearsIt() async throws {
        let pair = try await Pair()
        let stranger = try await pair.b.client(uid: 1001)
        try await stranger.call("subscribe")
        try await pair.bClient.call("subscribe")
        try await pair.aClient.call("publish", ["type": "org.example.reading"])
        _ = try await pair.bClient.event("appeared")
        #expect((try await stranger.call("list")["activities"] as? [Any])?.isEmpty == true)
        #expect(!stranger.eventNames.contains("appeared"))
        await pair.stop()
    }

    @Test func subscriptionsFilterByTypeAndStrangersBeaconsAreCountedAsRejected() async throws {
        let pair = try await Pair(bHandles: ["org.example.reading"])
        try await pair.bClient.call("subscribe", ["types": ["org.example.other"]])
        let all = try await pair.b.client()
        try await all.call("subscribe")
        try await pair.aClient.call("publish", ["type": "org.example.reading"])
        _ = try await all.event("appeared")
        #expect(!pair.bClient.eventNames.contains("appeared"))

        // A stranger's beacon (another account) and a malformed one: refused and counted.
        var encoder = BeaconEncoder()
        let stranger = encoder.encode(
            account: try AccountKey.generate(name: "x"), activityType: try ActivityType("org.example.reading"), flags: [],
            now: Date().timeIntervalSince1970)
        pair.b.radio.hear(stranger, from: "/org/bluez/hci0/dev_stranger")
        pair.b.radio.hear([0x10, 1, 2], from: "/org/bluez/hci0/dev_stranger")
        try await eventually { try await all.call("status")["beaconsRejected"] as? Int == 2 }
        #expect((try await all.call("list")["activities"] as? [Any])?.count == 1)
        await pair.stop()
    }

    @Test func theNewestActivityIsHeardAndEntriesAreLostAtExpiryAfterTheDeviceStops() async throws {
        var settings = DaemonRig.settings
        settings.expiry = .seconds(1)
        let pair = try await Pair(bHandles: ["org.example.reading", "org.example.writing"], settings: settings)
        try await pair.bClient.call("subscribe")
        let id = try #require(try await pair.aClient.call("publish", ["type": "org.example.reading"])["id"] as? String)
        let appeared = try #require(try await pair.bClient.event("appeared")["activity"] as? [String: Any])
        try await pair.aClient.call("update", ["id": id, "becomeCurrent": true])
        try await pair.aClient.call("invalidate", ["id": id])
        try await pair.aClient.call("publish", ["type": "org.example.writing"])
        // The new current activity reaches B.
        _ = try await pair.bClient.event("appeared") { ($0["activity"] as? [String: Any])?["type"] as? String == "org.example.writing" }
        let types: @Sendable () async throws -> [String]? = { (try await pair.bClient.call("list")["activities"] as? [[String: Any]])?.compactMap { $0["type"] as? String } }
        #expect(try await types()?.contains("org.example.writing") == true)
        // A stops: both are lost after the expiry (renewals stop with the advertisement).
        await pair.a.stop()
        let lost = try await pair.bClient.event("lost", within: .seconds(5)) {
            ($0["activity"] as? [String: Any])?["id"] as? String == appeared["id"] as? String
        }
        #expect(lost.isEmpty == false)
        try await eventually { try await types()?.isEmpty == true }
        await pair.b.stop()
    }
}
