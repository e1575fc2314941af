import Foundation
import HandoffKit
import HandoffProtocol
import HandoffTestSupport
import Testing

@Suite(.timeLimit(.minutes(1))) struct HandoffConnectionTests {
    @Test func helloOffersTheCurrentVersionAndRecordsTheAnswer() async throws {
        let daemon = try FakeDaemon()
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        #expect(connection.helloResult == nil)
        let result = try await connection.hello(app: "tests", handles: ["org.example.viewing"])
        #expect(result == HelloResult(version: 1, daemon: "fake 1"))
        #expect(connection.helloResult == result)
        let sent = try #require(daemon.requests.first)
        #expect(sent.method == .hello)
        #expect(sent.id == 1)
        let params = try sent.params(HelloParams.self)
        #expect(params == HelloParams(app: "tests", versions: [ProtocolVersion.current], handles: ["org.example.viewing"]))
    }

    @Test func responsesAnsweredOutOfOrderReachTheirRequests() async throws {
        let pending = PendingRequests()
        let daemon = try FakeDaemon { request, client in
            // Hold three publishes, then answer them last to first.
            guard request.method == .publish else { return }
            let held = pending.add(request, client)
            guard held.count == 3 else { return }
            for (request, client) in held.reversed() {
                let type = try! request.params(PublishParams.self).type
                client.answer(request, PublishResult(id: "activity-for-\(type)"))
            }
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        let ids = try await withThrowingTaskGroup(of: (String, String).self) { group in
            for type in ["a.one", "b.two", "c.three"] {
                group.addTask { (type, try await connection.publish(PublishParams(type: type)).id) }
            }
            return try await group.reduce(into: [String: String]()) { $0[$1.0] = $1.1 }
        }
        #expect(ids == ["a.one": "activity-for-a.one", "b.two": "activity-for-b.two", "c.three": "activity-for-c.three"])
        #expect(Set(daemon.requests.compactMap(\.id)) == [1, 2, 3])
    }

    @Test func manyConcurrentRequestsEachGetTheirOwnAnswer() async throws {
        let daemon = try FakeDaemon { request, client in
            // Echo the account name back as the fingerprint, after a jittered delay.
            let name = try! request.params(AccountNameParams.self).name
            Task {
                try await Task.sleep(for: .milliseconds(Int.random(in: 0...20)))
                client.answer(request, AccountInfo(name: name, fingerprint: "fp-\(name)", owner: 1000))
            }
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<200 {
                group.addTask {
                    let info = try await connection.createAccount(name: "account\(index)")
                    #expect(info.fingerprint == "fp-account\(index)")
                }
            }
            try await group.waitForAll()
        }
        #expect(daemon.requests.count == 200)
    }

    @Test func anErrorResponseBecomesAProtocolError() async throws {
        let daemon = try FakeDaemon { request, client in
            client.fail(request, .notFound, "no activity \"x\"")
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        let error = await #expect(throws: HandoffClientError.self) { try await connection.invalidate(id: "x") }
        #expect(error == .protocolError(ProtocolError(.notFound, "no activity \"x\"")))
        #expect(error?.description == "no activity \"x\" (not-found)")
    }

    @Test func eventsArriveInOrderAndUnknownEventsAreSkipped() async throws {
        let daemon = try FakeDaemon { request, client in
            guard request.method == .subscribe else { return }
            client.answer(request, EmptyResult())
            client.event(.appeared, NearbyEvent(activity: sampleActivity(id: "n1")))
            client.send(raw: "{\"data\":{},\"event\":\"from-the-future\"}\n")
            client.event(.updated, NearbyEvent(activity: sampleActivity(id: "n1", title: "Renamed")))
            client.event(.lost, NearbyEvent(activity: sampleActivity(id: "n1")))
            client.close()
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        try await connection.subscribe(types: ["org.example.viewing"])
        var received: [(EventName, NearbyActivity)] = []
        for await event in connection.events {
            received.append((event.name, try event.nearbyActivity()))
        }
        #expect(received.map(\.0) == [.appeared, .updated, .lost])
        #expect(received.map(\.1.title) == ["Docs", "Renamed", "Docs"])
        let sent = try #require(daemon.requests.first)
        #expect(try sent.params(SubscribeParams.self) == SubscribeParams(types: ["org.example.viewing"]))
    }

    @Test func theDaemonClosingMidRequestFailsItAtOnce() async throws {
        let daemon = try FakeDaemon { request, client in
            if request.method == .status { client.close() }
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath, requestTimeout: nil)
        let started = ContinuousClock.now
        let error = await #expect(throws: HandoffClientError.self) { try await connection.status() }
        #expect(error == .connectionClosed)
        #expect(ContinuousClock.now - started < .seconds(5))
        #expect(connection.isClosed)
        // Later requests fail without waiting, and the event stream has ended.
        await #expect(throws: HandoffClientError.connectionClosed) { try await connection.list() }
        var iterator = connection.events.makeAsyncIterator()
        #expect(await iterator.next() == nil)
    }

    @Test func anErrorWithoutIDBeforeClosingIsWhatRequestsReport() async throws {
        let daemon = try FakeDaemon { _, client in
            client.send(WireFormat.error(id: nil, ProtocolError(.tooManyClients, "handoffd serves 64 clients already")))
            client.close()
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        let error = await #expect(throws: HandoffClientError.self) { try await connection.hello(app: "tests") }
        #expect(error == .protocolError(ProtocolError(.tooManyClients, "handoffd serves 64 clients already")))
    }

    @Test func aSilentDaemonTimesOut() async throws {
        let daemon = try FakeDaemon { _, _ in }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(
            socketPath: daemon.socketPath, requestTimeout: .milliseconds(200))
        let error = await #expect(throws: HandoffClientError.self) { try await connection.status() }
        #expect(error == .timedOut(.status, after: .milliseconds(200)))
        #expect(error?.description.hasPrefix("handoffd did not answer \"status\" within 0.2 seconds") == true)
        #expect(!connection.isClosed)
    }

    @Test func cancellingARequestLeavesTheConnectionUsable() async throws {
        let daemon = try FakeDaemon { request, client in
            switch request.method {
            case .hello: client.answer(request, HelloResult(version: 1, daemon: "fake 1"))
            default: break  // never answers anything else
            }
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath, requestTimeout: nil)
        let waiting = Task { try await connection.status() }
        try await daemon.waitUntil { $0.requests.contains { $0.method == .status } }
        waiting.cancel()
        await #expect(throws: CancellationError.self) { try await waiting.value }
        #expect(try await connection.hello(app: "tests").version == 1)
    }

    @Test func anOverlongRequestIsRefusedBeforeItIsSent() async throws {
        let daemon = try FakeDaemon()
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        let huge = String(repeating: "x", count: ProtocolLimits.maximumLineLength)
        let error = await #expect(throws: HandoffClientError.self) {
            try await connection.publish(PublishParams(type: "org.example.viewing", title: huge))
        }
        guard case .protocolError(let failure) = error else {
            Issue.record("expected a protocol error, got \(String(describing: error))")
            return
        }
        #expect(failure.code == .lineTooLong)
        try await connection.hello(app: "tests")
        #expect(daemon.requests.map(\.method) == [.hello])
    }

    @Test func unreadableResponsesFailTheirRequestOnly() async throws {
        let daemon = try FakeDaemon { request, client in
            switch request.method {
            case .status:
                client.send(raw: "this is not JSON\n")
                client.send(raw: "{\"id\":\(request.id!),\"result\":{\"daemon\":7}}\n")
            default:
                client.answer(request, HelloResult(version: 1, daemon: "fake 1"))
            }
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        let error = await #expect(throws: HandoffClientError.self) { try await connection.status() }
        guard case .invalidResponse(let detail) = error else {
            Issue.record("expected invalidResponse, got \(String(describing: error))")
            return
        }
        #expect(detail.contains("daemon"))
        #expect(try await connection.hello(app: "tests").daemon == "fake 1")
    }

    @Test func resultsCanBeReadAsPlainJSON() async throws {
        let daemon = try FakeDaemon { request, client in
            client.answer(request, ListResult(activities: [sampleActivity()]))
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        let raw = try await connection.request(.list, EmptyResult(), as: JSONValue.self)
        let typed = try await connection.list()
        #expect(try WireFormat.compactJSON(raw) == WireFormat.compactJSON(typed))
    }

    @Test func closingTheConnectionIsSeenByTheDaemon() async throws {
        let daemon = try FakeDaemon()
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        try await connection.hello(app: "tests")
        await connection.close()
        #expect(connection.isClosed)
        try await daemon.waitUntil { $0.disconnects == 1 }
        #expect(daemon.disconnects == 1)
        await #expect(throws: HandoffClientError.connectionClosed) { try await connection.status() }
    }

    @Test func droppingTheLastReferenceClosesTheConnection() async throws {
        let daemon = try FakeDaemon()
        defer { daemon.stop() }
        var connection: HandoffConnection? = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        try await connection?.hello(app: "tests")
        connection = nil
        try await daemon.waitUntil { $0.disconnects == 1 }
        #expect(daemon.disconnects == 1)
    }

    @Test func waitUntilClosedReturnsWhenTheDaemonHangsUp() async throws {
        let daemon = try FakeDaemon { request, client in
            client.answer(request, HelloResult(version: 1, daemon: "fake 1"))
            client.close()
        }
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        try await connection.hello(app: "tests")
        await connection.waitUntilClosed()
        #expect(connection.isClosed)
    }
}

/// Collects requests for a behavior that answers them together.
final class PendingRequests: Sendable {
    private let held = Mutex<[(FakeRequest, FakeClient)]>([])

    /// Adds one; returns all held so far.
    func add(_ request: FakeRequest, _ client: FakeClient) -> [(FakeRequest, FakeClient)] {
        held.withLock {
            $0.append((request, client))
            return $0
        }
    }
}

import Synchronization

@Suite(.timeLimit(.minutes(1))) struct WaitUntilClosedTests {
    @Test func cancellingTheWaitReturnsWhileTheConnectionStaysOpen() async throws {
        let daemon = try FakeDaemon()
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        let waiting = Task { await connection.waitUntilClosed() }
        try await Task.sleep(for: .milliseconds(50))
        waiting.cancel()
        await waiting.value
        #expect(!connection.isClosed)
        #expect(try await connection.hello(app: "tests").version == 1)
    }
}
