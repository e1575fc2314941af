import BlueZ
import Foundation
import HandoffCore
import DBus
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

        /// `bSettings` (default: `settings`) lets the two differ, e.g. in their device names.
        init(
            aHandles: [String] = [], bHandles: [String] = [], settings: DaemonSettings = DaemonRig.settings,
            bSettings: DaemonSettings? = nil
        ) async throws {
            a = try await DaemonRig("a", air: air, registry: registry, settings: settings)
            b = try await DaemonRig("b", air: air, registry: registry, settings: bSettings ?? settings)
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
        // (as a new entry, or as the old one updated when the device kept its identity)
        _ = try await pair.bClient.frame { frame in
            guard let name = (frame["event"] as? SendableJSON)?.value as? String, name == "appeared" || name == "updated",
                let data = (frame["data"] as? SendableJSON)?.value as? [String: Any]
            else { return false }
            return (data["activity"] as? [String: Any])?["type"] as? String == "org.example.writing"
        }
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

    /// Issue 19: A stops; a stranger goes on sending A's newest beacon, every 50 ms,
    /// from its own address (`sameAddress` false) or from A's (true, a spoofed
    /// address). B drops A within the expiry plus one renewal interval of A stopping,
    /// never points the activity at the stranger, and counts the copies apart from
    /// recognised and rejected beacons.
    @Test(arguments: [false, true])
    func aCopiedBeaconDoesNotKeepADepartedDevicesActivityListed(sameAddress: Bool) async throws {
        var settings = DaemonRig.settings
        settings.expiry = .seconds(3)  // A renews every second
        let renewal = Advertiser.renewalInterval(expiry: settings.expiry)
        let pair = try await Pair(bHandles: ["org.example.reading"], settings: settings)
        try await pair.bClient.call("subscribe")
        try await pair.aClient.call("publish", ["type": "org.example.reading"])
        let appeared = try #require(try await pair.bClient.event("appeared")["activity"] as? [String: Any])
        let id = try #require(appeared["id"] as? String)
        try await Task.sleep(for: renewal * 2)  // A renews; B hears each new beacon
        await pair.a.stop()
        let stopped = ContinuousClock.now
        // Read once A is silent: a renewal heard between this and A stopping would count as well.
        let status = try await pair.bClient.call("status")
        let recognized = try #require(status["beaconsRecognized"] as? Int)
        #expect(recognized >= 2)
        #expect(status["beaconCopiesRefused"] as? Int == 0)
        let newest = try #require(await pair.a.radio.history.last { $0 != nil }??.payload)
        let sender: DBusObjectPath = sameAddress ? pair.a.radio.device : "/org/bluez/hci0/dev_stranger"
        let stranger = Task {
            while !Task.isCancelled {
                pair.b.radio.hear(newest, from: sender)
                try? await Task.sleep(for: .milliseconds(50))
            }
        }
        defer { stranger.cancel() }
        let before = try await pair.bClient.call("list")["activities"] as? [[String: Any]]
        #expect(before?.map { $0["id"] as? String } == [id], "A is listed until its expiry")
        _ = try await pair.bClient.event("lost", within: settings.expiry + renewal + .seconds(2)) {
            ($0["activity"] as? [String: Any])?["id"] as? String == id
        }
        let listedFor = ContinuousClock.now - stopped
        stranger.cancel()
        print("a copy from \(sameAddress ? "A's address" : "another address"): A dropped \(listedFor) after it stopped")
        #expect(listedFor <= settings.expiry + renewal + .milliseconds(300), "listed \(listedFor) after A stopped")
        let after = try await pair.bClient.call("status")
        #expect(after["beaconsRecognized"] as? Int == recognized, "a copy is not a recognised beacon")
        #expect(after["beaconsRejected"] as? Int == status["beaconsRejected"] as? Int, "nor a stranger's")
        #expect((after["beaconCopiesRefused"] as? Int ?? 0) > 10, "copies counted: \(String(describing: after["beaconCopiesRefused"]))")
        await pair.b.stop()
    }

    /// Issue 19: A's beacon copied from another address at once, well within one renewal
    /// interval (10 s here) of B first hearing it: only the address tells it is a copy. It
    /// neither refreshes A's entry nor points it (and a continue attempt) at the stranger.
    @Test func aCopyFromAnotherAddressNeitherRefreshesNorRedirectsTheEntry() async throws {
        let pair = try await Pair(bHandles: ["org.example.reading"])
        try await pair.bClient.call("subscribe")
        try await pair.aClient.call("publish", ["type": "org.example.reading"])
        let appeared = try #require(try await pair.bClient.event("appeared")["activity"] as? [String: Any])
        let id = try #require(appeared["id"] as? String)
        let original = try #require(await pair.b.daemon.nearby.entry(id))
        #expect(original.device == pair.a.radio.device.rawValue)
        let payload = try #require(await pair.a.radio.onAir?.payload)
        try await Task.sleep(for: .milliseconds(20))
        pair.b.radio.hear(payload, from: "/org/bluez/hci0/dev_stranger")
        try await eventually { try await pair.bClient.call("status")["beaconCopiesRefused"] as? Int == 1 }
        let after = try #require(await pair.b.daemon.nearby.entry(id))
        #expect(after.device == pair.a.radio.device.rawValue, "the entry now points at the stranger")
        #expect(after.expires == original.expires, "a copy refreshed the entry")
        #expect(after.lastSeen == original.lastSeen)
        // A's own repeat does refresh it.
        pair.b.radio.hear(payload, from: pair.a.radio.device)
        try await eventually { await pair.b.daemon.nearby.entry(id).map { $0.expires > original.expires } ?? false }
        #expect(try await pair.bClient.call("status")["beaconCopiesRefused"] as? Int == 1)
        await pair.stop()
    }
}
