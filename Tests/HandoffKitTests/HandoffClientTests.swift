import Foundation
import HandoffKit
import HandoffProtocol
import HandoffTestSupport
import Synchronization
import Testing

/// `HandoffClient`: nearby activities, forwarded continuations, and reconnecting
/// to a daemon that went away, against scripted daemons on real Unix sockets.
@Suite(.timeLimit(.minutes(1))) struct HandoffClientTests {
    static let type = "org.example.viewing"
    static let fast = ReconnectPolicy(initialDelay: .milliseconds(10), maximumDelay: .milliseconds(100), jitter: 0)

    static func client(
        _ socketPath: String, handles: [String] = [], reconnect: ReconnectPolicy = fast,
        requestTimeout: Duration = .seconds(10)
    ) -> HandoffClient {
        HandoffClient(
            configuration: .init(
                app: "tests", handles: handles, socketPath: socketPath, requestTimeout: requestTimeout,
                reconnect: reconnect, autosaveDelay: .milliseconds(10)))
    }

    @Test func nearbyReportsWhatIsThereThenEachChange() async throws {
        var state = ScriptedDaemon.State()
        state.activities = [sampleActivity(id: "n1")]
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let client = Self.client(daemon.socketPath)
        var changes = client.nearby().makeAsyncIterator()
        #expect(try await changes.next() == .appeared(sampleActivity(id: "n1")))
        #expect(daemon.requests.map(\.method) == [.hello, .subscribe, .list])
        #expect(try daemon.requests[1].params(SubscribeParams.self) == SubscribeParams())
        daemon.daemon.broadcast(try WireFormat.event(.updated, NearbyEvent(activity: sampleActivity(id: "n1", title: "Renamed"))))
        daemon.daemon.broadcast(Data("{\"data\":{},\"event\":\"from-the-future\"}\n".utf8))
        daemon.daemon.broadcast(try WireFormat.event(.appeared, NearbyEvent(activity: sampleActivity(id: "n2"))))
        daemon.daemon.broadcast(try WireFormat.event(.lost, NearbyEvent(activity: sampleActivity(id: "n1"))))
        daemon.daemon.broadcast(try WireFormat.event(.lost, NearbyEvent(activity: sampleActivity(id: "never-seen"))))
        daemon.daemon.broadcast(try WireFormat.event(.updated, NearbyEvent(activity: sampleActivity(id: "n2", title: "Two"))))
        #expect(try await changes.next() == .updated(sampleActivity(id: "n1", title: "Renamed")))
        #expect(try await changes.next() == .appeared(sampleActivity(id: "n2")))
        #expect(try await changes.next() == .lost(sampleActivity(id: "n1")))
        #expect(try await changes.next() == .updated(sampleActivity(id: "n2", title: "Two")))
        // A second listener gets the picture as it is now, on the same subscription.
        var second = client.nearby().makeAsyncIterator()
        #expect(try await second.next() == .appeared(sampleActivity(id: "n1")))
        #expect(daemon.requests.filter { $0.method == .subscribe }.count == 1)
        await client.close()
        #expect(try await changes.next() == nil, "closing the client ends its streams")
    }

    @Test func nearbyFiltersByType() async throws {
        var state = ScriptedDaemon.State()
        state.activities = [
            sampleActivity(id: "unknown", type: nil), sampleActivity(id: "other", type: "org.other.thing"),
            sampleActivity(id: "mine"),
        ]
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let client = Self.client(daemon.socketPath, handles: [Self.type])
        var changes = client.nearby(types: [Self.type]).makeAsyncIterator()
        #expect(try await changes.next() == .appeared(sampleActivity(id: "mine")))
        daemon.daemon.broadcast(try WireFormat.event(.appeared, NearbyEvent(activity: sampleActivity(id: "x", type: nil))))
        daemon.daemon.broadcast(try WireFormat.event(.updated, NearbyEvent(activity: sampleActivity(id: "x"))))
        #expect(try await changes.next() == .appeared(sampleActivity(id: "x")), "its type became known")
        await client.close()
    }

    @Test func forwardedContinuationsArriveOnTheirOwnStream() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon.socketPath, handles: [Self.type])
        let first = ContinuedActivity(type: Self.type, title: "one", account: "alice", device: "0a0b0c0d")
        let second = ContinuedActivity(type: Self.type, title: "two", account: "alice", device: "0a0b0c0d")
        try await client.connect()
        // Arrives before anyone listens: kept for the first listener.
        daemon.daemon.broadcast(try WireFormat.event(.continued, ContinuedEvent(continuation: "c7", activity: first, forwarded: true)))
        try await Task.sleep(for: .milliseconds(50))
        var restored = client.continuedActivities().makeAsyncIterator()
        #expect(try await restored.next() == first)
        // Not forwarded (another continuation of this connection's own), unknown: skipped.
        daemon.daemon.broadcast(try WireFormat.event(.continued, ContinuedEvent(continuation: "c8", activity: first)))
        daemon.daemon.broadcast(Data("{\"data\":{},\"event\":\"from-the-future\"}\n".utf8))
        daemon.daemon.broadcast(try WireFormat.event(.continued, ContinuedEvent(continuation: "c9", activity: second, forwarded: true)))
        #expect(try await restored.next() == second)
        await client.close()
        #expect(try await restored.next() == nil)
    }

    @Test func aFirstConnectionFailureIsReportedAtOnceAndTheNextUseTriesAgain() async throws {
        let path = FakeDaemon.temporarySocketPath()
        // Requests would wait this long for a reconnection; a first failure must not.
        let client = Self.client(path, requestTimeout: .seconds(600))
        await #expect(throws: HandoffClientError.daemonNotRunning(path)) { try await client.connect() }
        #expect(client.status == .idle)
        var changes = client.nearby().makeAsyncIterator()
        await #expect(throws: HandoffClientError.daemonNotRunning(path)) { try await changes.next() }

        let daemon = try ScriptedDaemon(socketPath: path)
        defer { daemon.stop() }
        try await client.connect()
        #expect(client.status == .connected(daemon: "handoffd 0.1.0"))
        await client.close()
        #expect(client.status == .closed(nil))
    }

    /// The daemon restarts: the client says hello again with its handles, subscribes
    /// again, and publishes its activities again with their latest fields (including
    /// a change made while the daemon was away), the current one last.
    @Test func afterADaemonRestartEverythingIsRestored() async throws {
        var state = ScriptedDaemon.State()
        state.activities = [sampleActivity(id: "n1")]
        let first = try ScriptedDaemon(state)
        let path = first.socketPath
        let client = Self.client(path, handles: [Self.type])
        var changes = client.nearby().makeAsyncIterator()
        #expect(try await changes.next() == .appeared(sampleActivity(id: "n1")))

        let background = UserActivity(type: "org.example.background", client: client)
        background.title = "Resigned"
        try await background.becomeCurrent()
        try await background.resignCurrent()
        let current = UserActivity(type: Self.type, client: client)
        current.title = "Before"
        current.userInfo = ["page": 1]
        current.webpageURL = URL(string: "https://example.org/p1")
        try await current.becomeCurrent()
        let neverShown = UserActivity(type: "org.example.never", client: client)
        neverShown.title = "never made current"
        let notices = current.wasContinuedEvents()

        var statuses = client.statusUpdates().makeAsyncIterator()
        #expect(await statuses.next() == .connected(daemon: "handoffd 0.1.0"))
        first.stop()
        #expect(await statuses.next() == .reconnecting(attempt: 1, lastError: nil))
        // Changed while the daemon is away.
        current.title = "After"
        current.userInfo["page"] = 2
        try await Task.sleep(for: .milliseconds(100))

        var restarted = ScriptedDaemon.State()
        restarted.activities = [sampleActivity(id: "n2")]
        let second = try ScriptedDaemon(restarted, socketPath: path)
        defer { second.stop() }
        while let status = await statuses.next(), status != .connected(daemon: "handoffd 0.1.0") {}

        let methods = second.requests.map(\.method)
        #expect(Array(methods.prefix(5)) == [.hello, .subscribe, .list, .publish, .publish])
        #expect(try second.requests[0].params(HelloParams.self).handles == [Self.type])
        let publishes = try second.requests.filter { $0.method == .publish }.map { try $0.params(PublishParams.self) }
        #expect(publishes.map(\.type) == ["org.example.background", Self.type])
        #expect(publishes[0].title == "Resigned")
        #expect(publishes[0].becomeCurrent == false)
        #expect(publishes[1].title == "After")
        #expect(publishes[1].userInfo == ["page": 2])
        #expect(publishes[1].webpageURL == "https://example.org/p1")
        #expect(publishes[1].becomeCurrent == true)
        #expect(background.publishedID == "a1b2c3")
        #expect(current.publishedID == "a1b2c3-2")
        #expect(neverShown.publishedID == nil)

        // What the old daemon knew is lost; what the new one knows appears.
        #expect(try await changes.next() == .lost(sampleActivity(id: "n1")))
        #expect(try await changes.next() == .appeared(sampleActivity(id: "n2")))
        // wasContinued follows the new id.
        second.daemon.broadcast(try WireFormat.event(.wasContinued, WasContinuedEvent(id: "a1b2c3-2", byDevice: "27be90c4")))
        var noticeIterator = notices.makeAsyncIterator()
        #expect(await noticeIterator.next()?.byDevice == "27be90c4")
        // And later changes go to the new daemon under the new id.
        current.title = "Later"
        try await current.update()
        let update = try #require(try second.requests.last { $0.method == .update }?.params(UpdateParams.self))
        #expect(update.id == "a1b2c3-2")
        #expect(update.title == "Later")
        #expect(second.daemon.connections == 1)
        await client.close()
    }

    /// After a restart, an event that reaches the client between its new subscription and
    /// its fresh `list` is covered by that list: listeners see the restart's `lost` first,
    /// then what the new daemon has, once, then the events that follow the list.
    @Test func eventsBeforeTheFreshListAreNotDeliveredAheadOfIt() async throws {
        var state = ScriptedDaemon.State()
        state.activities = [sampleActivity(id: "n1")]
        let first = try ScriptedDaemon(state)
        let path = first.socketPath
        let client = Self.client(path)
        var changes = client.nearby().makeAsyncIterator()
        #expect(try await changes.next() == .appeared(sampleActivity(id: "n1")))
        // The first list may reach the listener before the client reports itself connected.
        var statuses = client.statusUpdates().makeAsyncIterator()
        while let status = await statuses.next(), status != .connected(daemon: "handoffd 0.1.0") {}
        first.stop()
        #expect(await statuses.next() == .reconnecting(attempt: 1, lastError: nil))

        var restarted = ScriptedDaemon.State()
        restarted.activities = [sampleActivity(id: "n2")]
        // Sent after the subscribe response, before the list's.
        restarted.events = [try WireFormat.event(.appeared, NearbyEvent(activity: sampleActivity(id: "n2")))]
        let second = try ScriptedDaemon(restarted, socketPath: path)
        defer { second.stop() }
        while let status = await statuses.next(), status != .connected(daemon: "handoffd 0.1.0") {}
        #expect(try await changes.next() == .lost(sampleActivity(id: "n1")))
        #expect(try await changes.next() == .appeared(sampleActivity(id: "n2")))
        second.daemon.broadcast(try WireFormat.event(.updated, NearbyEvent(activity: sampleActivity(id: "n2", title: "Two"))))
        #expect(try await changes.next() == .updated(sampleActivity(id: "n2", title: "Two")))
        await client.close()
        #expect(try await changes.next() == nil)
    }

    @Test func aRequestDuringTheOutageWaitsForTheReconnection() async throws {
        var state = ScriptedDaemon.State()
        state.activities = [sampleActivity(id: "n1")]
        let first = try ScriptedDaemon(state)
        let path = first.socketPath
        let client = Self.client(path)
        try await client.connect()
        first.stop()
        let listing = Task { try await client.list() }
        try await Task.sleep(for: .milliseconds(300))
        let second = try ScriptedDaemon(state, socketPath: path)
        defer { second.stop() }
        #expect(try await listing.value.map(\.id) == ["n1"])
        await client.close()
    }

    @Test func reconnectingBacksOffAndGivesUpWhenToldTo() async throws {
        let daemon = try ScriptedDaemon()
        let policy = ReconnectPolicy(initialDelay: .milliseconds(20), maximumDelay: .milliseconds(80), jitter: 0, maximumAttempts: 4)
        let client = Self.client(daemon.socketPath, reconnect: policy)
        try await client.connect()
        let activity = UserActivity(type: Self.type, client: client)
        try await activity.becomeCurrent()
        var changes = client.nearby().makeAsyncIterator()
        var statuses = client.statusUpdates().makeAsyncIterator()
        _ = await statuses.next()
        let stopped = ContinuousClock.now
        daemon.stop()
        var seen: [ClientStatus] = []
        while let status = await statuses.next() { seen.append(status) }
        let elapsed = ContinuousClock.now - stopped
        let path = daemon.socketPath
        #expect(
            seen == [
                .reconnecting(attempt: 1, lastError: nil),
                .reconnecting(attempt: 2, lastError: .daemonNotRunning(path)),
                .reconnecting(attempt: 3, lastError: .daemonNotRunning(path)),
                .reconnecting(attempt: 4, lastError: .daemonNotRunning(path)),
                .closed(.daemonNotRunning(path)),
            ])
        // 20 + 40 + 80 + 80 ms of waiting, not a busy loop.
        #expect(elapsed >= .milliseconds(220))
        await #expect(throws: HandoffClientError.daemonNotRunning(path)) { try await changes.next() }
        await #expect(throws: HandoffClientError.daemonNotRunning(path)) { try await client.list() }
        activity.title = "changed after the end"
        await #expect(throws: HandoffClientError.daemonNotRunning(path)) { try await activity.update() }
    }

    @Test func theBackoffGrowsToItsCap() {
        let policy = ReconnectPolicy(initialDelay: .milliseconds(50), maximumDelay: .seconds(5), multiplier: 2, jitter: 0.2)
        #expect((1...9).map { policy.baseDelay(forAttempt: $0) } == [
            .milliseconds(50), .milliseconds(100), .milliseconds(200), .milliseconds(400), .milliseconds(800),
            .milliseconds(1600), .milliseconds(3200), .seconds(5), .seconds(5),
        ])
        #expect(policy.baseDelay(forAttempt: 1000) == .seconds(5))
        for attempt in 1...20 {
            let delay = policy.delay(forAttempt: attempt)
            let base = policy.baseDelay(forAttempt: attempt)
            #expect(delay >= base * 0.8 && delay <= base * 1.2)
        }
        #expect(ReconnectPolicy.never.maximumAttempts == 0)
    }

    @Test func closingInvalidatesByClosingTheConnection() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = Self.client(daemon.socketPath)
        let activity = UserActivity(type: Self.type, client: client)
        try await activity.becomeCurrent()
        await client.close()
        try await daemon.daemon.waitUntil { $0.disconnects == 1 }
        #expect(daemon.daemon.disconnects == 1)
        await #expect(throws: HandoffClientError.connectionClosed) { try await client.list() }
        #expect(client.status == .closed(nil))
    }
}
