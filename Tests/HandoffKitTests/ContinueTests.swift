import Foundation
import HandoffKit
import HandoffProtocol
import HandoffTestSupport
import Synchronization
import Testing

/// `continue` through HandoffKit, against a daemon scripted to answer it as docs/protocol.md says.
@Suite(.timeLimit(.minutes(1))) struct ContinueTests {
    static let restored = ContinuedActivity(
        type: "org.example.viewing", title: "Release notes", userInfo: ["scroll": 0.25, "tab": 3],
        webpageURL: "https://example.org/notes", requiredUserInfoKeys: ["tab"], account: "alice", device: "8c41d2f0")

    static func daemon(_ continuations: [String: ScriptedDaemon.ContinueScript]) throws -> ScriptedDaemon {
        var state = ScriptedDaemon.State()
        state.activities = [sampleActivity(id: "n1")]
        state.continuations = continuations
        return try ScriptedDaemon(state)
    }

    @Test func continueReturnsTheRestoredActivityAfterWillContinue() async throws {
        let daemon = try Self.daemon(["n1": .succeed(Self.restored)])
        defer { daemon.stop() }
        let client = HandoffClient(app: "tests", handles: ["org.example.viewing"], socketPath: daemon.socketPath)
        let nearby = try #require(try await client.list().first)
        let announced = Mutex<[WillContinue]>([])
        let activity = try await client.continue(nearby) { will in announced.withLock { $0.append(will) } }
        #expect(activity == Self.restored)
        #expect(activity.webpage == URL(string: "https://example.org/notes"))
        #expect(announced.withLock { $0 } == [WillContinue(continuation: "c1", nearbyID: "n1", type: "org.example.viewing")])
        let request = try #require(daemon.requests.first { $0.method == .continue })
        #expect(try request.params(ContinueParams.self) == ContinueParams(id: "n1"))
        let hello = try #require(daemon.requests.first)
        #expect(try hello.params(HelloParams.self).handles == ["org.example.viewing"])
        await client.close()
    }

    @Test func everyFailureCodeBecomesItsTypedError() async throws {
        var scripts: [String: ScriptedDaemon.ContinueScript] = [:]
        for code in ContinueError.Code.allCases { scripts["n-\(code.rawValue)"] = .fail(code, "because of \(code.rawValue)") }
        let daemon = try Self.daemon(scripts)
        defer { daemon.stop() }
        let client = HandoffClient(app: "tests", socketPath: daemon.socketPath)
        for code in ContinueError.Code.allCases {
            let error = await #expect(throws: ContinueError.self) {
                try await client.continue(nearbyID: "n-\(code.rawValue)")
            }
            #expect(error == ContinueError(code: code, message: "because of \(code.rawValue)"))
            #expect(error?.code == code)
            #expect(error?.message == "because of \(code.rawValue)")
            #expect(error?.description == "\(code.meaning): because of \(code.rawValue) (\(code.rawValue))")
        }
        // Each case can be caught by name.
        do {
            _ = try await client.continue(nearbyID: "n-out-of-range")
            Issue.record("expected a failure")
        } catch ContinueError.outOfRange(let message) {
            #expect(message == "because of out-of-range")
        }
        let expected: [ContinueError.Code: ContinueError] = [
            .outOfRange: .outOfRange("m"), .timeout: .timeout("m"), .rejected: .rejected("m"),
            .noHandler: .noHandler("m"), .payloadInvalid: .payloadInvalid("m"), .cancelled: .cancelled("m"),
            .streamsUnsupported: .streamsUnsupported("m"),
        ]
        for code in ContinueError.Code.allCases {
            #expect(ContinueError(ContinueFailedEvent(continuation: "c", nearbyID: "n", code: code, message: "m")) == expected[code])
        }
        await client.close()
    }

    @Test func cancellingTheTaskSendsContinueCancel() async throws {
        let daemon = try Self.daemon(["n1": .never])
        defer { daemon.stop() }
        let client = HandoffClient(app: "tests", socketPath: daemon.socketPath)
        try await client.connect()
        let continuing = Task { try await client.continue(nearbyID: "n1") }
        try await daemon.daemon.waitUntil { $0.requests.contains { $0.method == .continue } }
        // willContinue has been answered; the continuation is under way at the daemon.
        try await Task.sleep(for: .milliseconds(50))
        continuing.cancel()
        await #expect(throws: CancellationError.self) { try await continuing.value }
        let cancel = try #require(daemon.requests.first { $0.method == .continueCancel })
        #expect(try cancel.params(ContinuationParams.self) == ContinuationParams(continuation: "c1"))
        #expect(daemon.withState { $0.unfinished.isEmpty })
        // The connection is still good.
        #expect(try await client.list().map(\.id) == ["n1"])
        await client.close()
    }

    @Test func theTimeoutIsSentAndCheckedFirst() async throws {
        let daemon = try Self.daemon(["n1": .succeed(Self.restored)])
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        try await connection.hello(app: "tests")
        _ = try await connection.continue(nearbyID: "n1", timeout: .seconds(20))
        let sent = try #require(daemon.requests.first { $0.method == .continue })
        #expect(try sent.params(ContinueParams.self).timeout == 20)
        for bad in [Duration.milliseconds(500), .seconds(61)] {
            let error = await #expect(throws: HandoffClientError.self) {
                try await connection.continue(nearbyID: "n1", timeout: bad)
            }
            guard case .protocolError(let failure) = error else {
                Issue.record("expected invalid-params, got \(String(describing: error))")
                continue
            }
            #expect(failure.code == .invalidParams)
        }
        #expect(daemon.requests.filter { $0.method == .continue }.count == 1)
        await connection.close()
    }

    @Test func anUnknownNearbyIDIsNotFound() async throws {
        let daemon = try Self.daemon([:])
        defer { daemon.stop() }
        let client = HandoffClient(app: "tests", socketPath: daemon.socketPath)
        let error = await #expect(throws: HandoffClientError.self) { try await client.continue(nearbyID: "nope") }
        #expect(error == .protocolError(ProtocolError(.notFound, "no nearby activity \"nope\"")))
        await client.close()
    }

    /// The daemon writes `continued` right behind the `continue` result; many at once
    /// must each reach their own caller, with none lost between result and event.
    @Test func manyContinuationsAtOnceEachGetTheirOwnOutcome() async throws {
        var scripts: [String: ScriptedDaemon.ContinueScript] = [:]
        for index in 0..<40 {
            var activity = Self.restored
            activity.title = "activity \(index)"
            scripts["n\(index)"] = index.isMultiple(of: 3) ? .fail(.rejected, "no \(index)") : .succeed(activity)
        }
        let daemon = try Self.daemon(scripts)
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        try await connection.hello(app: "tests")
        let outcomes = await withTaskGroup(of: (Int, String).self) { group in
            for index in 0..<40 {
                group.addTask {
                    do {
                        return (index, try await connection.continue(nearbyID: "n\(index)").title ?? "")
                    } catch {
                        return (index, "\(error)")
                    }
                }
            }
            return await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }
        for index in 0..<40 {
            let expected = index.isMultiple(of: 3)
                ? ContinueError.rejected("no \(index)").description : "activity \(index)"
            #expect(outcomes[index] == expected)
        }
        await connection.close()
    }

    @Test func theConnectionClosingFailsAWaitingContinuation() async throws {
        let daemon = try Self.daemon(["n1": .never])
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        try await connection.hello(app: "tests")
        let continuing = Task { try await connection.continue(nearbyID: "n1") }
        try await daemon.daemon.waitUntil { $0.requests.contains { $0.method == .continue } }
        daemon.stop()
        let error = await #expect(throws: HandoffClientError.self) { try await continuing.value }
        #expect(error == .connectionClosed)
    }

    @Test func continuationEventsStillReachTheEventStream() async throws {
        let daemon = try Self.daemon(["n1": .fail(.timeout, "the origin device did not answer within 10 s")])
        defer { daemon.stop() }
        let connection = try await HandoffConnection.connect(socketPath: daemon.socketPath)
        try await connection.hello(app: "tests")
        await #expect(throws: ContinueError.timeout("the origin device did not answer within 10 s")) {
            try await connection.continue(nearbyID: "n1")
        }
        var events = connection.events.makeAsyncIterator()
        let event = try #require(await events.next())
        #expect(event.name == .continueFailed)
        #expect(try event.data(as: ContinueFailedEvent.self).continuation == "c1")
        await connection.close()
    }

    @Test func continuedActivityUserInfoDecodesAsAnAppsOwnType() throws {
        struct Reading: Codable, Equatable {
            var scroll: Double
            var tab: Int
        }
        #expect(try Self.restored.userInfo(as: Reading.self) == Reading(scroll: 0.25, tab: 3))
        var bare = Self.restored
        bare.userInfo = nil
        #expect(throws: DecodingError.self) { try bare.userInfo(as: Reading.self) }
        bare.webpageURL = "ftp://example.org/file"
        #expect(bare.webpage == nil)
        bare.webpageURL = "javascript:alert(1)"
        #expect(bare.webpage == nil)
    }
}
