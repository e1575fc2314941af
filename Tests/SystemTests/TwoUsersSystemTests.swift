#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import HandoffProtocol
import Testing

/// Issue 20 end to end: two local users (uids 1000 and 1001, each a real uid,
/// see `UserConnection`) on each of two laptops, each with an account of their
/// own shared between the laptops. Each user lists, continues and is told
/// `wasContinued` only for their own account, in both directions, and a
/// continued activity never reaches the other user's app.
@Suite(.serialized) struct TwoUsersSystemTests {
    static let alice: UInt32 = 1000
    static let bob: UInt32 = 1001
    static let aliceType = "org.handoff.test.alice"
    static let bobType = "org.handoff.test.bob"

    /// A user's connections on both laptops, with their account shared.
    struct User {
        let onA: WireClient
        let onB: WireClient

        init(_ uid: UInt32, account: String, handles: [String], laptops: TwoLaptops) async throws {
            onA = try await UserConnection.client(socket: laptops.a.socket, uid: uid, handles: handles)
            onB = try await UserConnection.client(socket: laptops.b.socket, uid: uid, handles: handles)
            let info = try await onA.call(.accountCreate, AccountNameParams(name: account), as: AccountInfo.self)
            #expect(info.owner == uid)
            let code = try await onA.call(.accountExport, AccountNameParams(name: account), as: AccountExportResult.self).code
            _ = try await onB.call(.accountImport, AccountImportParams(code: code, name: account), as: AccountInfo.self)
        }
    }

    @Test(.enabled(if: UserConnection.available, "needs root and setpriv to act as other uids"))
    func eachUserListsContinuesAndIsToldOnlyAboutTheirOwnAccountBothWays() async throws {
        let laptops = try await TwoLaptops()
        // The other uids must reach the sockets (the bus directory is mkdtemp's 0700).
        chmod(laptops.bus.directory, 0o755)
        // Neither user's apps handle their own type on the continuing side; each handles the
        // other's, so a forward across users would show.
        let alice = try await User(Self.alice, account: "alice", handles: [Self.bobType], laptops: laptops)
        let bob = try await User(Self.bob, account: "bob", handles: [Self.aliceType], laptops: laptops)

        // A to B: alice publishes on A; only alice sees it on B, and continues it there.
        try await oneWay(
            publisher: alice.onA, viewer: alice.onB, other: bob.onB, otherOrigin: bob.onA, account: "alice",
            type: Self.aliceType)
        // B to A: bob publishes on B; only bob sees it on A, and continues it there.
        try await oneWay(
            publisher: bob.onB, viewer: bob.onA, other: alice.onA, otherOrigin: alice.onB, account: "bob",
            type: Self.bobType)

        // Both users publish on A at once: both beacons are on the air, each under its
        // user's account, so each user on B lists their own, and continues it.
        _ = try await alice.onA.call(.publish, PublishParams(type: Self.aliceType, title: "alice, both", webpageURL: "https://example.org/alice"), as: PublishResult.self)
        _ = try await bob.onA.call(.publish, PublishParams(type: Self.bobType, title: "bob, both", webpageURL: "https://example.org/bob"), as: PublishResult.self)
        @Sendable func listed(_ viewer: WireClient, _ account: String) async throws -> NearbyActivity? {
            try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.first { $0.account == account }
        }
        try await eventually(within: .seconds(20)) {
            let aliceSees = try await listed(alice.onB, "alice") != nil
            let bobSees = try await listed(bob.onB, "bob") != nil
            return aliceSees && bobSees
        }
        for (viewer, account) in [(alice.onB, "alice"), (bob.onB, "bob")] {
            let nearby = try #require(try await listed(viewer, account))
            _ = try await viewer.call(.continue, ContinueParams(id: nearby.id, timeout: 20), as: WillContinue.self)
            guard let line = try await viewer.event(.continued, timeout: .seconds(25)) else {
                let failed = try await viewer.event(.continueFailed, timeout: .milliseconds(10))
                Issue.record("no continued event for \(account): \(failed.map { String(decoding: $0, as: UTF8.self) } ?? "nor a failure")")
                continue
            }
            #expect(try WireFormat.eventData(ContinuedEvent.self, from: line).activity.title == "\(account), both")
        }
        await laptops.stop()
    }

    func oneWay(
        publisher: WireClient, viewer: WireClient, other: WireClient, otherOrigin: WireClient, account: String,
        type: String
    ) async throws {
        let published = try await publisher.call(
            .publish, PublishParams(type: type, title: "\(account)'s page", webpageURL: "https://example.org/\(account)"),
            as: PublishResult.self)
        try await eventually(within: .seconds(20)) {
            try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.contains { $0.account == account }
        }
        let nearby = try #require(
            try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.first { $0.account == account })
        // The other user hears nothing of it: not in list, not in status.
        #expect(try await other.call(.list, EmptyResult(), as: ListResult.self).activities.isEmpty)
        #expect(try await other.call(.status, EmptyResult(), as: StatusResult.self).nearbyCount == 0)
        #expect(try await other.failure(.continue, ContinueParams(id: nearby.id)).code == .notFound)

        let will = try await viewer.call(.continue, ContinueParams(id: nearby.id, timeout: 20), as: WillContinue.self)
        let line = try #require(try await viewer.event(.continued, timeout: .seconds(25)), "no continued event")
        let continued = try WireFormat.eventData(ContinuedEvent.self, from: line)
        #expect(continued.continuation == will.continuation)
        #expect(continued.activity.account == account)
        #expect(continued.activity.title == "\(account)'s page")
        let told = try #require(try await publisher.event(.wasContinued, timeout: .seconds(10)), "no wasContinued")
        #expect(try WireFormat.eventData(WasContinuedEvent.self, from: told).id == published.id)
        // The other user's app declares this type, but the activity is not theirs: nothing is
        // forwarded to it, and the other user's connection on the origin is not told either.
        #expect(try await other.event(.continued, timeout: .seconds(1)) == nil)
        #expect(try await otherOrigin.event(.wasContinued, timeout: .milliseconds(200)) == nil)
        _ = try await publisher.call(.invalidate, ActivityIDParams(id: published.id), as: EmptyResult.self)
    }
}
