import DBusTestSupport
import Foundation
import HandoffKit
import HandoffProtocol
import Synchronization
import Testing

/// HandoffKit against the real handoffd: when the daemon restarts, apps do not notice.
@Suite(.serialized) struct HandoffKitReconnectTests {
    /// A publishes through HandoffKit; A's daemon is stopped with SIGTERM and started
    /// again on the same socket; the client reconnects on its own and publishes the
    /// activity again, so A advertises it and B hears it again.
    @Test func aRestartedDaemonGetsTheActivityBack() async throws {
        let laptops = try await TwoLaptops()
        let client = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: client)
        activity.title = "Docs"
        activity.userInfo = ["page": 3]
        activity.webpageURL = URL(string: "https://example.org/docs")
        try await activity.becomeCurrent()
        let viewer = try await laptops.b.client(handles: [TwoLaptops.type])
        try await eventually {
            try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.contains { $0.type == TwoLaptops.type }
        }

        var statuses = client.statusUpdates().makeAsyncIterator()
        #expect(await statuses.next() == .connected(daemon: "handoffd \(HandoffVersion.current)"))
        #expect(await laptops.a.terminate() == 0)
        #expect(try await laptops.sim.activeInstances("hci0") == 0, "the stopped daemon's advertisement is gone")
        guard case .reconnecting = await statuses.next() else {
            Issue.record("the client did not notice the daemon going away")
            return
        }
        let stopped = Date()
        let restarted = try await DaemonProcess(bus: laptops.bus, name: "a", adapter: "hci0")
        let started = ContinuousClock.now
        while let status = await statuses.next() {
            if case .connected = status { break }
        }
        let reconnected = ContinuousClock.now - started
        print("HandoffKit reconnected and re-published \(reconnected) after handoffd accepted connections again")

        // The new daemon has the activity again, as the current one, and advertises it.
        let inspector = try await restarted.client()
        let status = try await inspector.call(.status, EmptyResult(), as: StatusResult.self)
        #expect(status.localActivityCount == 1)
        #expect(status.currentActivityType == TwoLaptops.type)
        #expect(activity.isCurrent)
        #expect(activity.publishedID != nil)
        try await eventually { try await laptops.sim.activeInstances("hci0") == 1 }
        // B hears it again: a beacon of A newer than the restart.
        try await eventually(within: .seconds(10)) {
            try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.contains {
                $0.type == TwoLaptops.type && $0.lastSeen > stopped
            }
        }
        // And the activity keeps working on the new daemon: a change is saved there.
        activity.title = "Docs, part 2"
        try await activity.update()
        #expect(!activity.needsSave)

        await client.close()
        _ = await restarted.terminate()
        await laptops.stop()
    }

    /// B's app listens to `nearby()`; B's daemon restarts; the stream goes on: the app
    /// hears A's activity again without doing anything.
    @Test func nearbyGoesOnAcrossARestartOfTheListeningDaemon() async throws {
        let laptops = try await TwoLaptops()
        let publisher = try await laptops.a.client()
        _ = try await publisher.call(.publish, PublishParams(type: TwoLaptops.type, title: "Docs"), as: PublishResult.self)

        let client = HandoffClient(
            configuration: .init(app: "org.handoff.test.viewer", handles: [TwoLaptops.type], socketPath: laptops.b.socket))
        let changes = Mutex<[(Date, NearbyChange)]>([])
        let listener = Task {
            for try await change in client.nearby(types: [TwoLaptops.type]) {
                changes.withLock { $0.append((Date(), change)) }
            }
        }
        try await eventually {
            changes.withLock { $0.contains { if case .appeared = $0.1 { true } else { false } } }
        }
        let firstID = try #require(changes.withLock { $0.first?.1.activity.id })
        #expect(changes.withLock { $0.first?.1.activity.type } == TwoLaptops.type)

        #expect(await laptops.b.terminate() == 0)
        let restartedAt = Date()
        let restarted = try await DaemonProcess(bus: laptops.bus, name: "b", adapter: "hci1")
        // After the restart the app hears A's activity again, with its type (the handles were declared again).
        try await eventually(within: .seconds(15)) {
            changes.withLock { list in
                list.contains { date, change in
                    guard date > restartedAt else { return false }
                    if case .appeared(let activity) = change { return activity.type == TwoLaptops.type }
                    return false
                }
            }
        }
        // The entry the stopped daemon had (the new one does not know it) is reported lost, before
        // the new one appears: the fresh `list` comes first, even when an `appeared` event reached
        // the client between its new subscription and that list.
        let afterRestart = changes.withLock { list in list.filter { $0.0 > restartedAt }.map(\.1) }
        let lostAt = afterRestart.firstIndex { change in
            if case .lost(let activity) = change { return activity.id == firstID }
            return false
        }
        let appearedAt = afterRestart.firstIndex { change in
            if case .appeared(let activity) = change { return activity.type == TwoLaptops.type }
            return false
        }
        #expect(lostAt != nil, "\(afterRestart)")
        #expect(lostAt.flatMap { lost in appearedAt.map { lost < $0 } } == true, "\(afterRestart)")
        let status = try await restarted.client().call(.status, EmptyResult(), as: StatusResult.self)
        #expect(status.clientCount == 2, "the app's reconnected client and this one")
        #expect(client.status == .connected(daemon: "handoffd \(HandoffVersion.current)"))

        listener.cancel()
        await client.close()
        _ = await restarted.terminate()
        await laptops.stop()
    }
}
