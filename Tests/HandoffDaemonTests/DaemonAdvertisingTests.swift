import BlueZ
import Foundation
import HandoffCore
import Testing

@testable import HandoffDaemon

/// The daemon through its radio seam: what a publish puts on the air, and
/// what the privacy policy and the activity's end do to it.
@Suite(.timeLimit(.minutes(1))) struct DaemonAdvertisingTests {
    static let type = "org.example.reading"

    /// The account key behind an export code, to read the beacon as another device would.
    static func key(_ client: TestClient, account: String = "home") async throws -> AccountKey {
        let code = try #require(try await client.call("account.export", ["name": account])["code"] as? String)
        return try AccountKeyCode.decode(code, name: account)
    }

    @Test func publishPutsTheAccountsBeaconOnTheAirAndInvalidateTakesItOff() async throws {
        let rig = try await DaemonRig("a", registry: nil)
        let client = try await rig.client()
        try await client.call("account.create", ["name": "home"])
        #expect(await rig.radio.onAir == nil)

        let id = try #require(try await client.call("publish", ["type": Self.type, "title": "Chapter 3"])["id"] as? String)
        let advertised = try #require(await rig.radio.onAir)
        #expect(advertised.type == .broadcast, "connectable only once the privacy check allows it")
        #expect(advertised.payload.count == BeaconFormat.payloadLength)
        // Another device of the account reads the type from it; a stranger's key does not.
        var recognizer = BeaconRecognizer(accounts: [try await Self.key(client)])
        recognizer.declareActivityTypes([try ActivityType(Self.type)])
        let beacon = try recognizer.recognize(advertised.payload, now: Date().timeIntervalSince1970)
        #expect(beacon.activityType.type?.rawValue == Self.type)
        #expect(beacon.flags.contains(.hasPayload))
        var stranger = BeaconRecognizer(accounts: [try AccountKey.generate(name: "other")])
        #expect(throws: BeaconRejection.self) { try stranger.recognize(advertised.payload, now: Date().timeIntervalSince1970) }

        try await client.call("invalidate", ["id": id])
        #expect(await rig.radio.onAir == nil)
        await rig.stop()
    }

    @Test func supportsStreamsSetsTheBeaconsFlagAndUpdateClearsIt() async throws {
        let rig = try await DaemonRig("a", registry: nil)
        let client = try await rig.client()
        try await client.call("account.create", ["name": "home"])
        let key = try await Self.key(client)
        func flags() async throws -> BeaconFlags {
            let payload = try #require(await rig.radio.onAir?.payload)
            // A fresh recognizer each time: the replay check is not what this test is about.
            var recognizer = BeaconRecognizer(accounts: [key])
            return try recognizer.recognize(payload, now: Date().timeIntervalSince1970).flags
        }
        let plain = try #require(try await client.call("publish", ["type": Self.type])["id"] as? String)
        #expect(try await !flags().contains(.supportsStreams))
        let id = try #require(
            try await client.call("publish", ["type": Self.type, "supportsStreams": true])["id"] as? String)
        #expect(id != plain)
        #expect(try await flags().contains(.supportsStreams))
        try await client.call("update", ["id": id, "supportsStreams": false])
        #expect(try await !flags().contains(.supportsStreams))
        try await client.call("update", ["id": id, "title": "kept"])
        #expect(try await !flags().contains(.supportsStreams), "an update without the member keeps it")
        await rig.stop()
    }

    @Test func thePrivacyPolicyDecidesTheTypeAndWhetherAnythingGoesOut() async throws {
        let rig = try await DaemonRig("a", registry: nil)
        let client = try await rig.client()
        try await client.call("account.create", ["name": "home"])
        try await client.call("publish", ["type": Self.type])
        let payload = try #require(await rig.radio.onAir?.payload)

        await rig.daemon.apply(AdvertisingPolicy(advertise: true, type: .peripheral, availability: nil))
        // Connectable: a new beacon, whose flags say `reachable` (DaemonDevicesTests shows receivers act on it).
        #expect(await rig.radio.onAir?.type == .peripheral)
        #expect(await rig.radio.onAir?.payload != payload)
        await rig.daemon.apply(AdvertisingPolicy(advertise: false, type: .peripheral, availability: nil))
        #expect(await rig.radio.onAir == nil)
        // Publishing again while withheld keeps it off the air.
        try await client.call("publish", ["type": "org.example.other"])
        #expect(await rig.radio.onAir == nil)
        await rig.daemon.apply(AdvertisingPolicy(advertise: true, type: .broadcast, availability: nil))
        #expect(await rig.radio.onAir?.type == .broadcast)
        await rig.stop()
    }

    /// Once handoffd stops, nothing goes on the air again: a client that leaves during the
    /// shutdown (its activity invalidated, another one current) must not register a beacon anew.
    @Test func afterShutDownNothingGoesOnTheAirAgain() async throws {
        let rig = try await DaemonRig("a", registry: nil)
        let lingering = try await rig.client()
        try await lingering.call("account.create", ["name": "home"])
        try await lingering.call("publish", ["type": "org.example.first"])
        let leaving = try await rig.client()
        try await leaving.call("publish", ["type": "org.example.second"])
        await rig.daemon.shutDown()
        #expect(await rig.radio.onAir == nil)
        await leaving.close()
        #expect(await rig.radio.onAir == nil)
        await rig.daemon.apply(AdvertisingPolicy(advertise: true, type: .peripheral, availability: nil))
        #expect(await rig.radio.onAir == nil)
        await rig.stop()
    }

    @Test func resigningTheCurrentActivityFallsBackToTheOneBefore() async throws {
        let rig = try await DaemonRig("a", registry: nil)
        let client = try await rig.client()
        try await client.call("account.create", ["name": "home"])
        let key = try await Self.key(client)
        try await client.call("publish", ["type": "org.example.first"])
        let second = try #require(try await client.call("publish", ["type": "org.example.second"])["id"] as? String)
        var recognizer = BeaconRecognizer(accounts: [key])
        recognizer.declareActivityTypes([try ActivityType("org.example.first"), try ActivityType("org.example.second")])
        func advertisedType() async throws -> String? {
            let payload = try #require(await rig.radio.onAir?.payload)
            return try recognizer.recognize(payload, now: Date().timeIntervalSince1970).activityType.type?.rawValue
        }
        #expect(try await advertisedType() == "org.example.second")
        try await client.call("resign", ["id": second])
        #expect(try await advertisedType() == "org.example.first")
        // A user without an account cannot publish.
        let other = try await rig.client(uid: 1001)
        await #expect(throws: ClientError.self) { try await other.call("publish", ["type": Self.type]) }
        await rig.stop()
    }
}
