import Foundation
import HandoffKit
import HandoffProtocol
import HandoffTestSupport
import Synchronization
import Testing

/// The NSUserActivity-style API, against a scripted daemon: which requests each call makes.
@Suite(.timeLimit(.minutes(1))) struct UserActivityTests {
    static let type = "org.example.viewing"

    static func client(_ daemon: ScriptedDaemon, autosave: Duration? = .milliseconds(20)) -> HandoffClient {
        HandoffClient(
            configuration: .init(app: "tests", socketPath: daemon.socketPath, autosaveDelay: autosave))
    }

    static func requests(_ daemon: ScriptedDaemon, _ method: HandoffProtocol.Method) -> [FakeRequest] {
        daemon.requests.filter { $0.method == method }
    }

    @Test func becomeCurrentPublishesEveryField() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon)
        let activity = UserActivity(type: Self.type, client: client)
        activity.title = "Release notes"
        activity.userInfo = ["scroll": 0.25, "tab": 3]
        activity.webpageURL = URL(string: "https://example.org/notes")
        activity.requiredUserInfoKeys = ["tab", "scroll"]
        activity.expirationDate = Date().addingTimeInterval(3600)
        #expect(!activity.isCurrent)
        #expect(daemon.requests.isEmpty, "nothing is sent before becomeCurrent")
        try await activity.becomeCurrent()
        #expect(activity.isCurrent)
        #expect(activity.publishedID == "a1b2c3")
        #expect(!activity.needsSave)
        let publish = try #require(Self.requests(daemon, .publish).first)
        let params = try publish.params(PublishParams.self)
        #expect(params.type == Self.type)
        #expect(params.title == "Release notes")
        #expect(params.userInfo == ["scroll": 0.25, "tab": 3])
        #expect(params.webpageURL == "https://example.org/notes")
        #expect(params.requiredUserInfoKeys == ["scroll", "tab"])
        #expect(params.becomeCurrent == true)
        let expiresIn = try #require(params.expiresIn)
        #expect(expiresIn > 3590 && expiresIn <= 3600)
        #expect(daemon.requests.map(\.method) == [.hello, .publish])
        await client.close()
    }

    @Test func changesAreSavedOnTheirOwnInOneUpdate() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon)
        let activity = UserActivity(type: Self.type, client: client)
        activity.title = "Page 1"
        try await activity.becomeCurrent()
        activity.title = "Page 2"
        activity.userInfo["page"] = 2
        #expect(activity.needsSave)
        try await daemon.daemon.waitUntil { _ in !Self.requests(daemon, .update).isEmpty }
        try await waitFor { !activity.needsSave }
        let updates = Self.requests(daemon, .update)
        #expect(updates.count == 1)
        let params = try #require(try updates.first?.params(UpdateParams.self))
        #expect(params.id == "a1b2c3")
        #expect(params.title == "Page 2")
        #expect(params.userInfo == ["page": 2])
        #expect(params.becomeCurrent == nil, "a save does not make the activity current again")
        await client.close()
    }

    @Test func updateSavesAtOnceWhenNeeded() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon, autosave: nil)
        let activity = UserActivity(type: Self.type, client: client)
        try await activity.becomeCurrent()
        try await activity.update()
        #expect(Self.requests(daemon, .update).isEmpty, "nothing to save")
        activity.addUserInfoEntries(from: ["a": 1])
        activity.addUserInfoEntries(from: ["b": "two", "a": 3])
        try await activity.update()
        let updates = Self.requests(daemon, .update)
        #expect(updates.count == 1)
        #expect(try updates.first?.params(UpdateParams.self).userInfo == ["a": 3, "b": "two"])
        #expect(!activity.needsSave)
        await client.close()
    }

    @Test func resignAndBecomeCurrentAgain() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon)
        let activity = UserActivity(type: Self.type, client: client)
        try await activity.becomeCurrent()
        try await activity.resignCurrent()
        #expect(!activity.isCurrent)
        try await activity.resignCurrent()  // not current: nothing to do
        try await activity.becomeCurrent()
        #expect(activity.isCurrent)
        #expect(daemon.requests.map(\.method) == [.hello, .publish, .resign, .update])
        #expect(try Self.requests(daemon, .resign).first?.params(ActivityIDParams.self).id == "a1b2c3")
        let update = try #require(try Self.requests(daemon, .update).first?.params(UpdateParams.self))
        #expect(update.id == "a1b2c3")
        #expect(update.becomeCurrent == true)
        await client.close()
    }

    @Test func invalidateEndsTheActivity() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon)
        let activity = UserActivity(type: Self.type, client: client)
        try await activity.becomeCurrent()
        let notices = activity.wasContinuedEvents()
        await activity.invalidate()
        #expect(activity.isInvalidated)
        #expect(!activity.isCurrent)
        #expect(try Self.requests(daemon, .invalidate).first?.params(ActivityIDParams.self).id == "a1b2c3")
        var iterator = notices.makeAsyncIterator()
        #expect(await iterator.next() == nil, "the notices end with the activity")
        await #expect(throws: UserActivityError.invalidated) { try await activity.becomeCurrent() }
        #expect(Self.requests(daemon, .publish).count == 1)
        await client.close()
    }

    @Test func clearingAFieldUpdateCannotRemovePublishesAgain() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon, autosave: nil)
        let activity = UserActivity(type: Self.type, client: client)
        activity.title = "Secret title"
        activity.webpageURL = URL(string: "https://example.org/a")
        try await activity.becomeCurrent()
        activity.title = nil
        try await activity.update()
        #expect(daemon.requests.map(\.method) == [.hello, .publish, .publish, .invalidate])
        let second = try #require(try Self.requests(daemon, .publish).last?.params(PublishParams.self))
        #expect(second.title == nil)
        #expect(second.webpageURL == "https://example.org/a")
        #expect(second.becomeCurrent == true)
        #expect(try Self.requests(daemon, .invalidate).first?.params(ActivityIDParams.self).id == "a1b2c3")
        #expect(activity.publishedID == "a1b2c3-2")
        await client.close()
    }

    @Test func limitsAreCheckedBeforeAnythingIsSent() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon)
        let now = Date()
        let cases: [(String, (UserActivity) -> Void, UserActivityError)] = [
            ("org.not a type", { _ in }, .invalidType("org.not a type", reason: "labels may hold only A-Z a-z 0-9 - _")),
            ("nodots", { _ in }, .invalidType("nodots", reason: "it needs at least two dot-separated labels, like org.example.viewing")),
            ("org.-bad", { _ in }, .invalidType("org.-bad", reason: "each label must start with a letter or digit")),
            (Self.type, { $0.title = String(repeating: "é", count: 129) }, .titleTooLong(bytes: 258)),
            (Self.type, { $0.userInfo = ["blob": .string(String(repeating: "a", count: 3062))] }, .userInfoTooLarge(bytes: 3073)),
            (Self.type, { $0.webpageURL = URL(string: "ftp://example.org/file") }, .unsupportedWebpageURL("ftp://example.org/file")),
            (Self.type, { $0.webpageURL = URL(string: "file:///etc/passwd") }, .unsupportedWebpageURL("file:///etc/passwd")),
            (
                Self.type, { $0.webpageURL = URL(string: "https://example.org/" + String(repeating: "p", count: 2030)) },
                .webpageURLTooLong(bytes: 2050)
            ),
            (Self.type, { $0.requiredUserInfoKeys = ["tab", "page"]; $0.userInfo = ["tab": 1] }, .missingRequiredUserInfoKeys(["page"])),
            (Self.type, { $0.expirationDate = now.addingTimeInterval(-1) }, .expired(now.addingTimeInterval(-1))),
            (Self.type, { $0.expirationDate = now.addingTimeInterval(8 * 86400) }, .expirationTooFar(now.addingTimeInterval(8 * 86400))),
        ]
        for (type, configure, expected) in cases {
            let activity = UserActivity(type: type, client: client)
            configure(activity)
            #expect(throws: expected) { try activity.validate() }
            await #expect(throws: expected) { try await activity.becomeCurrent() }
            #expect(!activity.isCurrent)
        }
        #expect(Self.requests(daemon, .publish).isEmpty)
        // Right at the limits, it goes through.
        let full = UserActivity(type: Self.type, client: client)
        full.title = String(repeating: "é", count: 128)
        full.userInfo = ["blob": .string(String(repeating: "a", count: 3061))]
        full.webpageURL = URL(string: "https://example.org/" + String(repeating: "p", count: 2028))
        try await full.becomeCurrent()
        #expect(Self.requests(daemon, .publish).count == 1)
        await client.close()
    }

    @Test func aRefusalLeavesTheActivityNotCurrent() async throws {
        let daemon = try FakeDaemon { request, client in
            switch request.method {
            case .hello: client.answer(request, HelloResult(version: 1, daemon: "fake 1"))
            default: client.fail(request, .noAccount, "uid 1000 has no handoff account; create one with: handoffctl pair")
            }
        }
        defer { daemon.stop() }
        let client = HandoffClient(app: "tests", socketPath: daemon.socketPath)
        let activity = UserActivity(type: Self.type, client: client)
        let error = await #expect(throws: HandoffClientError.self) { try await activity.becomeCurrent() }
        #expect(error == .protocolError(ProtocolError(.noAccount, "uid 1000 has no handoff account; create one with: handoffctl pair")))
        #expect(!activity.isCurrent)
        #expect(activity.publishedID == nil)
        await client.close()
    }

    @Test func wasContinuedReachesTheStreamsAndTheDelegate() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon)
        let activity = UserActivity(type: Self.type, client: client)
        let delegate = RecordingDelegate()
        activity.delegate = delegate
        try await activity.becomeCurrent()
        let first = activity.wasContinuedEvents()
        let second = activity.wasContinuedEvents()
        // Events for other activities, and events this version does not know, are skipped.
        daemon.daemon.broadcast(try WireFormat.event(.wasContinued, WasContinuedEvent(id: "someone-else", byDevice: "00000000")))
        daemon.daemon.broadcast(Data("{\"data\":{\"x\":1},\"event\":\"from-the-future\"}\n".utf8))
        daemon.daemon.broadcast(try WireFormat.event(.wasContinued, WasContinuedEvent(id: "a1b2c3", byDevice: "27be90c4")))
        var firstIterator = first.makeAsyncIterator()
        var secondIterator = second.makeAsyncIterator()
        #expect(await firstIterator.next() == WasContinuedEvent(id: "a1b2c3", byDevice: "27be90c4"))
        #expect(await secondIterator.next() == WasContinuedEvent(id: "a1b2c3", byDevice: "27be90c4"))
        try await waitFor { delegate.devices == ["27be90c4"] }
        #expect(delegate.devices == ["27be90c4"])
        await client.close()
    }

    @Test func droppingTheActivityInvalidatesIt() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon)
        do {
            let activity = UserActivity(type: Self.type, client: client)
            try await activity.becomeCurrent()
        }
        try await daemon.daemon.waitUntil { _ in !Self.requests(daemon, .invalidate).isEmpty }
        #expect(try Self.requests(daemon, .invalidate).first?.params(ActivityIDParams.self).id == "a1b2c3")
        await client.close()
    }

    @Test func anAutomaticSaveThatFailsIsReported() async throws {
        let daemon = try FakeDaemon { request, client in
            switch request.method {
            case .hello: client.answer(request, HelloResult(version: 1, daemon: "fake 1"))
            case .publish: client.answer(request, PublishResult(id: "a1"))
            default: client.fail(request, .notFound, "this connection has no activity \"a1\"")
            }
        }
        defer { daemon.stop() }
        let client = HandoffClient(configuration: .init(app: "tests", socketPath: daemon.socketPath, autosaveDelay: .zero))
        let activity = UserActivity(type: Self.type, client: client)
        let delegate = RecordingDelegate()
        activity.delegate = delegate
        try await activity.becomeCurrent()
        activity.title = "changed"
        try await waitFor { !delegate.failures.isEmpty }
        #expect(delegate.willSave >= 1)
        #expect(delegate.failures.first?.contains("no activity \"a1\"") == true)
        #expect(activity.needsSave, "a failed save leaves the change pending")
        await client.close()
    }

    @Test func codableUserInfoRoundTrips() async throws {
        struct Viewing: Codable, Equatable {
            var url: String
            var scroll: Double
            var tabs: [String]
        }
        let client = HandoffClient(app: "tests", socketPath: "/nonexistent")
        let activity = UserActivity(type: Self.type, client: client)
        let state = Viewing(url: "https://example.org", scroll: 0.5, tabs: ["a", "b"])
        try activity.setUserInfo(state)
        #expect(activity.userInfo == ["url": "https://example.org", "scroll": 0.5, "tabs": ["a", "b"]])
        let restored = ContinuedActivity(type: Self.type, userInfo: activity.userInfo, account: "me", device: "00000000")
        #expect(try restored.userInfo(as: Viewing.self) == state)
        #expect(throws: EncodingError.self) { try activity.setUserInfo([1, 2, 3]) }
        #expect(throws: UserActivityError.userInfoTooLarge(bytes: 4011)) {
            try activity.setUserInfo(["blob": String(repeating: "x", count: 4000)])
        }
    }
}

/// A delegate that remembers what it was told.
final class RecordingDelegate: UserActivityDelegate {
    private let record = Mutex<(devices: [String], failures: [String], willSave: Int)>(([], [], 0))

    var devices: [String] { record.withLock { $0.devices } }
    var failures: [String] { record.withLock { $0.failures } }
    var willSave: Int { record.withLock { $0.willSave } }

    func userActivityWasContinued(_ activity: UserActivity, byDevice device: String) {
        record.withLock { $0.devices.append(device) }
    }

    func userActivityWillSave(_ activity: UserActivity) {
        record.withLock { $0.willSave += 1 }
    }

    func userActivity(_ activity: UserActivity, didFailToSave error: any Error) {
        record.withLock { $0.failures.append(String(describing: error)) }
    }
}

/// Waits (at most five seconds) until `condition` holds, sleeping between looks.
func waitFor(within limit: Duration = .seconds(5), _ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + limit
    while try await !condition() {
        guard ContinuousClock.now < deadline else { throw WaitTimeout(limit: limit) }
        try await Task.sleep(for: .milliseconds(5))
    }
}

struct WaitTimeout: Error, CustomStringConvertible {
    var limit: Duration
    var description: String { "condition not met within \(limit)" }
}
