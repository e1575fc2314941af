import BlueZ
import DBusTestSupport
import Foundation
import HandoffCore
import Testing

@testable import HandoffDaemon

/// `continue` between two daemons over the loopback link: the real sealed
/// exchange of docs/continuation.md, and each way it can fail.
@Suite(.timeLimit(.minutes(1))) struct DaemonContinueTests {
    typealias Pair = DaemonNearbyTests.Pair
    static let type = "org.example.reading"

    /// A publishes; B's client sees it appear. Returns the nearby id on B and A's activity id.
    static func published(
        _ pair: Pair, _ params: [String: Any] = ["type": type, "title": "Chapter 3", "userInfo": ["page": 3]]
    ) async throws -> (nearby: String, activity: String) {
        try await pair.bClient.call("subscribe")
        let activity = try #require(try await pair.aClient.call("publish", params)["id"] as? String)
        let appeared = try #require(try await pair.bClient.event("appeared")["activity"] as? [String: Any])
        return (try #require(appeared["id"] as? String), activity)
    }

    /// `continue`'s result, then the one event that ends it.
    static func continueActivity(_ client: TestClient, _ id: String, timeout: Double = 3) async throws
        -> (name: String, event: String, data: [String: Any])
    {
        let will = try await client.call("continue", ["id": id, "timeout": timeout])
        let name = try #require(will["continuation"] as? String)
        let end = try await client.frame(within: .seconds(timeout + 5)) { frame in
            guard let event = (frame["event"] as? SendableJSON)?.value as? String,
                event == "continued" || event == "continueFailed",
                let data = (frame["data"] as? SendableJSON)?.value as? [String: Any]
            else { return false }
            return data["continuation"] as? String == name
        }
        let event = try #require((end["event"] as? SendableJSON)?.value as? String)
        return (name, event, (end["data"] as? SendableJSON)?.value as? [String: Any] ?? [:])
    }

    @Test func theContinuingAppGetsExactlyWhatWasPublishedAndTheOriginIsTold() async throws {
        let pair = try await Pair(bHandles: [Self.type])
        let (nearby, activity) = try await Self.published(pair)
        let result = try await Self.continueActivity(pair.bClient, nearby)
        #expect(result.event == "continued")
        let restored = try #require(result.data["activity"] as? [String: Any])
        #expect(restored["type"] as? String == Self.type)
        #expect(restored["title"] as? String == "Chapter 3")
        #expect((restored["userInfo"] as? [String: Any])?["page"] as? Int == 3)
        #expect(restored["account"] as? String == "home")
        let told = try await pair.aClient.event("wasContinued")
        #expect(told["id"] as? String == activity)
        await pair.stop()
    }

    @Test func anUnknownIdOrABadTimeoutIsAnErrorNotAnEvent() async throws {
        let pair = try await Pair(bHandles: [Self.type])
        let (nearby, _) = try await Self.published(pair)
        await #expect(throws: ClientError.self) { try await pair.bClient.call("continue", ["id": "nope"]) }
        let error = await #expect(throws: ClientError.self) {
            try await pair.bClient.call("continue", ["id": nearby, "timeout": 0.5])
        }
        #expect(error?.code == "invalid-params")
        // Another user of B may not continue an activity of an account that is not theirs.
        let other = try await pair.b.client(uid: 1001)
        #expect(await #expect(throws: ClientError.self) { try await other.call("continue", ["id": nearby]) }?.code == "not-found")
        await pair.stop()
    }

    @Test func noAppAndNoWebpageIsNoHandler() async throws {
        let pair = try await Pair()
        let (nearby, _) = try await Self.published(pair)
        let result = try await Self.continueActivity(pair.bClient, nearby)
        #expect(result.event == "continueFailed")
        #expect(result.data["code"] as? String == "no-handler")
        // Decided here: the origin is not even asked.
        #expect(pair.b.link?.written.withLock { $0 } == 0)
        await pair.stop()
    }

    @Test func noLinkIsOutOfRange() async throws {
        let air = FakeAir()
        let a = try await DaemonRig("a", air: air, registry: nil)
        let b = try await DaemonRig("b", air: air, registry: nil)
        let aClient = try await a.client()
        let bClient = try await b.client(handles: [Self.type])
        try await aClient.call("account.create", ["name": "home"])
        let code = try #require(try await aClient.call("account.export", ["name": "home"])["code"] as? String)
        try await bClient.call("account.import", ["code": code, "name": "home"])
        try await bClient.call("subscribe")
        try await aClient.call("publish", ["type": Self.type])
        let nearby = try #require((try await bClient.event("appeared")["activity"] as? [String: Any])?["id"] as? String)
        let result = try await Self.continueActivity(bClient, nearby)
        #expect(result.data["code"] as? String == "out-of-range")
        await a.stop()
        await b.stop()
    }

    @Test func anOriginThatStoppedServingIsOutOfRange() async throws {
        let pair = try await Pair(bHandles: [Self.type])
        let (nearby, _) = try await Self.published(pair)
        pair.registry.handlers.withLock { $0 = [:] }
        let result = try await Self.continueActivity(pair.bClient, nearby)
        #expect(result.data["code"] as? String == "out-of-range")
        await pair.stop()
    }

    @Test func anActivityNoLongerCurrentOnTheOriginIsRejected() async throws {
        let pair = try await Pair(bHandles: [Self.type])
        let (nearby, activity) = try await Self.published(pair)
        try await pair.aClient.call("resign", ["id": activity])
        let result = try await Self.continueActivity(pair.bClient, nearby)
        #expect(result.data["code"] as? String == "rejected")
        #expect((result.data["message"] as? String)?.contains("no longer current") == true)
        #expect(!pair.aClient.eventNames.contains("wasContinued"))
        await pair.stop()
    }

    @Test func aSilentOriginIsATimeout() async throws {
        let pair = try await Pair(bHandles: [Self.type])
        let (nearby, _) = try await Self.published(pair)
        pair.b.link?.fault.withLock { $0 = .silent }
        let started = ContinuousClock.now
        let result = try await Self.continueActivity(pair.bClient, nearby, timeout: 1)
        #expect(result.data["code"] as? String == "timeout")
        #expect(ContinuousClock.now - started < .seconds(4))
        await pair.stop()
    }

    @Test func aTamperedResponseIsPayloadInvalidAndNothingIsHandedOver() async throws {
        let pair = try await Pair(bHandles: [Self.type])
        let (nearby, _) = try await Self.published(pair)
        pair.b.link?.fault.withLock { $0 = .tamper }
        let result = try await Self.continueActivity(pair.bClient, nearby)
        #expect(result.event == "continueFailed")
        #expect(result.data["code"] as? String == "payload-invalid")
        #expect(!pair.bClient.eventNames.contains("continued"))
        await pair.stop()
    }

    @Test func cancelAnswersThenFailsWithCancelled() async throws {
        let pair = try await Pair(bHandles: [Self.type])
        let (nearby, _) = try await Self.published(pair)
        pair.b.link?.fault.withLock { $0 = .silent }
        let will = try await pair.bClient.call("continue", ["id": nearby, "timeout": 30])
        let name = try #require(will["continuation"] as? String)
        try await pair.bClient.call("continue.cancel", ["continuation": name])
        let failed = try await pair.bClient.event("continueFailed")
        #expect(failed["continuation"] as? String == name)
        #expect(failed["code"] as? String == "cancelled")
        await #expect(throws: ClientError.self) {
            try await pair.bClient.call("continue.cancel", ["continuation": name])
        }
        await pair.stop()
    }

    @Test func stoppingTheDaemonFailsUnfinishedContinuationsWithCancelled() async throws {
        let pair = try await Pair(bHandles: [Self.type])
        let (nearby, _) = try await Self.published(pair)
        pair.b.link?.fault.withLock { $0 = .silent }
        _ = try await pair.bClient.call("continue", ["id": nearby, "timeout": 30])
        await pair.b.daemon.shutDown()
        let failed = try await pair.bClient.event("continueFailed")
        #expect(failed["code"] as? String == "cancelled")
        await pair.stop()
    }

    @Test func aTypeNoAppHandlesButAWebpageIsContinuedToTheRequester() async throws {
        let pair = try await Pair()
        let (nearby, _) = try await Self.published(
            pair, ["type": Self.type, "webpageURL": "https://example.org/chapter-3"])
        let result = try await Self.continueActivity(pair.bClient, nearby)
        #expect(result.event == "continued")
        #expect((result.data["activity"] as? [String: Any])?["webpageURL"] as? String == "https://example.org/chapter-3")
        await pair.stop()
    }

    @Test func aContinuedActivityIsForwardedToTheAppThatHandlesItsType() async throws {
        let pair = try await Pair()
        let (nearby, _) = try await Self.published(pair)
        let app = try await pair.b.client(app: "reader", handles: [Self.type])
        let result = try await Self.continueActivity(pair.bClient, nearby)
        #expect(result.event == "continued")
        let forwarded = try await app.event("continued")
        #expect(forwarded["forwarded"] as? Bool == true)
        #expect((forwarded["activity"] as? [String: Any])?["title"] as? String == "Chapter 3")
        await pair.stop()
    }
}
