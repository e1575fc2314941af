import DBusTestSupport
import Foundation
import HandoffCore
import HandoffProtocol
import Logging
import Synchronization
import Testing

@testable import HandoffDaemon

/// Issue 20: several users on one laptop. What one user does must not reach,
/// starve or flood another.
@Suite(.timeLimit(.minutes(1))) struct DaemonUsersTests {
    typealias Pair = DaemonNearbyTests.Pair
    static let type = DaemonContinueTests.type

    /// The requester (uid 1000) does not handle the type; an app of uid 1001 on the same
    /// machine does. The decrypted activity goes to uid 1000's own handler, never to 1001's.
    @Test func aContinuedActivityIsForwardedOnlyToAnAppOfTheRequestingUser() async throws {
        let pair = try await Pair()
        let stranger = try await pair.b.client(uid: 1001, app: "someone-elses-reader", handles: [Self.type])
        let (nearby, _) = try await DaemonContinueTests.published(
            pair, ["type": Self.type, "title": "Diary", "webpageURL": "https://example.org/diary"])
        // No app of uid 1000 handles it: the requester alone gets it (a web continuation).
        let alone = try await DaemonContinueTests.continueActivity(pair.bClient, nearby)
        #expect(alone.event == "continued")
        // Now uid 1000 has a handler, connected before the stranger's newest connection.
        let own = try await pair.b.client(uid: 1000, app: "my-reader", handles: [Self.type])
        let later = try await pair.b.client(uid: 1001, app: "someone-elses-newer-reader", handles: [Self.type])
        let forwarded = try await DaemonContinueTests.continueActivity(pair.bClient, nearby)
        #expect(forwarded.event == "continued")
        let delivered = try await own.event("continued") { $0["continuation"] as? String == forwarded.name }
        #expect(delivered["forwarded"] as? Bool == true)
        try await Task.sleep(for: .milliseconds(100))
        #expect(!stranger.eventNames.contains("continued"))
        #expect(!later.eventNames.contains("continued"))
        await pair.stop()
    }

    /// Each user's activity goes out under that user's own account: root may use every
    /// account, but its beacon is not sent under another user's ("aaa" sorts first).
    @Test func rootsActivityGoesOutUnderRootsOwnAccount() async throws {
        let rig = try await DaemonRig("root", registry: nil)
        let user = try await rig.client(uid: 1000)
        let root = try await rig.client(uid: 0)
        try await user.call("account.create", ["name": "aaa"])
        try await root.call("account.create", ["name": "zzz"])
        try await root.call("publish", ["type": Self.type])
        let payload = try #require(await rig.radio.onAir?.payload)
        let now = Date().timeIntervalSince1970
        var roots = BeaconRecognizer(accounts: [try await DaemonAdvertisingTests.key(root, account: "zzz")])
        #expect((try? roots.recognize(payload, now: now)) != nil)
        var users = BeaconRecognizer(accounts: [try await DaemonAdvertisingTests.key(user, account: "aaa")])
        #expect((try? users.recognize(payload, now: now)) == nil)
        await rig.stop()
    }

    /// One uid declaring 4096 types used to make `hello` with `handles` fail for everyone.
    /// Now a uid may declare 256 over its connections, and they go when the connection does.
    @Test func declaredTypesBelongToTheirConnectionWithinAQuotaPerUser() async throws {
        let rig = try await DaemonRig("quota")
        let flood = (0..<4096).map { "org.flood.t\($0)" }
        let error = await #expect(throws: ClientError.self) { try await rig.client(uid: 1001, handles: flood) }
        #expect(error?.code == "invalid-params")
        #expect(error?.message.contains("256") == true)
        // Others are not affected.
        _ = try await rig.client(uid: 1002, handles: [Self.type])

        let first = try await rig.client(uid: 1001, handles: Array(flood.prefix(256)))
        let more = await #expect(throws: ClientError.self) {
            try await rig.client(uid: 1001, handles: ["org.flood.extra"])
        }
        #expect(more?.code == "invalid-params")
        // The quota counts types, not declarations: the same types again are fine.
        _ = try await rig.client(uid: 1001, handles: Array(flood.prefix(10)))
        await first.close()
        // Released with the connection that declared them.
        try await eventually { await rig.daemon.clients.declared.count == 1 + 10 }
        _ = try await rig.client(uid: 1001, handles: Array(flood.suffix(246)))
        await rig.stop()
    }

    /// "Request ids are integers": a request without one (or with null) is answered with
    /// `invalid-json` and not run.
    @Test func aRequestWithoutAnIDIsNotRun() async throws {
        let rig = try await DaemonRig("ids")
        let client = try await rig.client()
        for line in [
            "{\"method\":\"account.create\",\"params\":{\"name\":\"ghost\"}}",
            "{\"id\":null,\"method\":\"account.create\",\"params\":{\"name\":\"ghost\"}}",
        ] {
            await client.connection.receive(Array(line.utf8))
            let answer = try await client.frame { $0["error"] != nil }
            let error = try #require((answer["error"] as? SendableJSON)?.value as? [String: Any])
            #expect(error["code"] as? String == "invalid-json")
            #expect(answer["id"] == nil)
        }
        let accounts = try await client.call("account.list")["accounts"] as? [Any] ?? []
        #expect(accounts.isEmpty)
        await rig.stop()
    }

    /// Titles are shown on other devices: control characters, separators and bidi
    /// formatting characters are refused (invalid-params), in publish and update alike.
    @Test(arguments: ["evil\u{202E}txt.exe", "nul\u{0}byte", "two\nlines", "tab\there", "isolate\u{2066}x", "del\u{7F}", "sep\u{2028}x"])
    func aTitleWithHiddenCharactersIsRefused(_ title: String) async throws {
        let rig = try await DaemonRig("titles")
        let client = try await rig.client()
        try await client.call("account.create", ["name": "me"])
        let error = await #expect(throws: ClientError.self) {
            try await client.call("publish", ["type": Self.type, "title": title])
        }
        #expect(error?.code == "invalid-params")
        #expect(error?.message.hasPrefix("title: character") == true)
        let id = try #require(try await client.call("publish", ["type": Self.type, "title": "Café – 日本語 👍"])["id"] as? String)
        let update = await #expect(throws: ClientError.self) { try await client.call("update", ["id": id, "title": title]) }
        #expect(update?.code == "invalid-params")
        // Nothing was lost: the activity keeps its title and stays current.
        #expect(try await client.call("status")["currentActivityType"] as? String == Self.type)
        await rig.stop()
    }

    /// A client that lets its outbox fill up is disconnected for real: forgotten by the
    /// daemon, its activities invalidated, and nothing it sent afterwards is run.
    @Test func aClientThatDoesNotReadIsDisconnectedAndItsLaterRequestsAreNotRun() async throws {
        var options = ClientGateway.Options()
        options.outboxCapacity = 8
        let rig = try await DaemonRig("overflow", options: options)
        let observer = try await rig.client()
        try await observer.call("account.create", ["name": "me"])
        guard case .success(let silent) = await rig.gateway.open(uid: 1000, pid: 1) else { throw RigError("refused") }
        func send(_ id: Int, _ method: String, _ params: String = "{}") async {
            await silent.receive(Array("{\"id\":\(id),\"method\":\"\(method)\",\"params\":\(params)}".utf8))
        }
        await send(1, "hello", "{\"app\":\"silent\",\"versions\":[1]}")
        await send(2, "publish", "{\"type\":\"\(Self.type)\"}")
        #expect(try await observer.call("status")["localActivityCount"] as? Int == 1)
        for id in 3..<20 { await send(id, "status") }
        #expect(silent.outbox.isClosed)
        await send(20, "account.create", "{\"name\":\"late\"}")
        try await eventually { try await observer.call("status")["clientCount"] as? Int == 1 }
        #expect(try await observer.call("status")["localActivityCount"] as? Int == 0)
        let names = (try await observer.call("account.list")["accounts"] as? [[String: Any]] ?? []).compactMap { $0["name"] as? String }
        #expect(names == ["me"])
        await rig.stop()
    }

    /// One uid's refused connections cannot flood the journal; another uid's are still logged.
    @Test func refusedConnectionsAreLoggedAFewTimesAMinutePerUser() async throws {
        let record = AddressPrivacyMonitorTests.LogRecord()
        var options = ClientGateway.Options()
        options.maximumClients = 1
        let rig = try await DaemonRig("flood", options: options, log: AddressPrivacyMonitorTests.RecordingHandler(record: record))
        _ = try await rig.client()
        for _ in 0..<200 {
            guard case .failure = await rig.gateway.open(uid: 1001, pid: 1) else { throw RigError("accepted") }
        }
        #expect(record.count(containing: "refused a connection from uid 1001") == 5)
        guard case .failure = await rig.gateway.open(uid: 1002, pid: 1) else { throw RigError("accepted") }
        #expect(record.count(containing: "refused a connection from uid 1002") == 1)
        await rig.stop()
    }

    @Test func theWarningLimiterSumsUpWhatItHeldBack() {
        let record = AddressPrivacyMonitorTests.LogRecord()
        let logger = Logger(label: "limiter") { _ in AddressPrivacyMonitorTests.RecordingHandler(record: record) }
        let limiter = WarningLimiter(burst: 2, window: .seconds(60))
        let start = ContinuousClock.now
        for index in 0..<10 { limiter.warn(logger, uid: 7, "warning \(index)", now: start) }
        #expect(record.count(containing: "warning") == 2)
        limiter.warn(logger, uid: 7, "warning late", now: start + .seconds(61))
        #expect(record.count(containing: "8 more warnings about uid 7 were not logged") == 1)
        #expect(record.count(containing: "warning late") == 1)
    }
}

extension DaemonUsersTests {
    /// Account names are one namespace on the machine (docs/protocol.md, Access control, says
    /// why). What a taken name tells another user is that it is taken: not whose, nor the key.
    @Test func anotherUsersAccountNameIsTakenButNothingMoreLeaks() async throws {
        let rig = try await DaemonRig("names")
        let alice = try await rig.client(uid: 1000)
        let bob = try await rig.client(uid: 1001)
        let info = try await alice.call("account.create", ["name": "home"])
        let fingerprint = try #require(info["fingerprint"] as? String)
        let error = await #expect(throws: ClientError.self) { try await bob.call("account.create", ["name": "home"]) }
        #expect(error?.code == "conflict")
        #expect(error?.message.contains("1000") == false)
        #expect(error?.message.contains(fingerprint) == false)
        for method in ["account.export", "account.remove"] {
            #expect(await #expect(throws: ClientError.self) { try await bob.call(method, ["name": "home"]) }?.code == "not-found")
        }
        #expect((try await bob.call("account.list")["accounts"] as? [Any] ?? []).isEmpty)
        await rig.stop()
    }
}

extension DaemonUsersTests {
    /// Two users publishing at once are both on the air, each under their own account
    /// in a slot of its own; one going off the air leaves the other where it was.
    @Test func twoUsersAreOnTheAirAtOnce() async throws {
        let rig = try await DaemonRig("air", registry: nil)
        let alice = try await rig.client(uid: 1000)
        let bob = try await rig.client(uid: 1001)
        try await alice.call("account.create", ["name": "alice"])
        try await bob.call("account.create", ["name": "bob"])
        try await alice.call("publish", ["type": Self.type])
        let bobs = try #require(try await bob.call("publish", ["type": Self.type])["id"] as? String)
        let both = await rig.radio.onAirSlots
        #expect(both.map(\.slot) == [0, 1])
        #expect(Set(both.map(\.payload)).count == 2)
        #expect(try await alice.call("status")["notAdvertised"] == nil)
        #expect(try await bob.call("status")["notAdvertised"] == nil)
        let alicesPayload = try #require(both.first?.payload)
        try await bob.call("invalidate", ["id": bobs])
        let after = await rig.radio.onAirSlots
        #expect(after.map(\.slot) == [0])
        #expect(after.first?.payload == alicesPayload)
        await rig.stop()
    }

    /// When the adapter has no free advertising instance for a user's beacon, that
    /// user is told so in `status`; the user already on the air is not disturbed.
    @Test func statusTellsAUserWhoseActivityIsNotOnTheAirWhy() async throws {
        let rig = try await DaemonRig("air", registry: nil)
        await rig.radio.setInstances(1)
        let alice = try await rig.client(uid: 1000)
        let bob = try await rig.client(uid: 1001)
        try await alice.call("account.create", ["name": "alice"])
        try await bob.call("account.create", ["name": "bob"])
        try await alice.call("publish", ["type": Self.type])
        #expect(try await alice.call("status")["notAdvertised"] == nil)
        let bobs = try #require(try await bob.call("publish", ["type": Self.type])["id"] as? String)
        let reason = try await bob.call("status")["notAdvertised"] as? String
        #expect(reason?.contains("no free advertising instance") == true, "\(reason ?? "nil")")
        #expect(try await alice.call("status")["notAdvertised"] == nil)
        try await bob.call("invalidate", ["id": bobs])
        #expect(try await bob.call("status")["notAdvertised"] == nil)
        await rig.stop()
    }
}
