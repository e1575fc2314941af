import DBusTestSupport
import Foundation
import HandoffKit
import HandoffProtocol
import Synchronization
import Testing

/// `continue` end to end: `handoffctl continue` and HandoffKit on B against the real
/// handoffd, an activity published through HandoffKit on A, the GATT exchange of
/// docs/continuation.md over the simulated BlueZ.
@Suite(.serialized) struct ContinueSystemTests {
    /// What every run of `handoffctl continue` must do, whatever its outcome: exit
    /// (no hang, no crash), and on failure print nothing on stdout and one
    /// `handoffctl: …` line on stderr.
    static func expectCleanExit(_ outcome: CtlProcess.Outcome) -> Int32? {
        guard let status = outcome.status else {
            Issue.record("handoffctl continue did not exit in time or died of a signal; stderr: \(outcome.stderr)")
            return nil
        }
        if status != 0 {
            #expect(outcome.stdout.isEmpty, "stdout: \(outcome.stdout)")
            #expect(outcome.stderr.hasPrefix("handoffctl: "), "stderr: \(outcome.stderr)")
            #expect(outcome.stderr.filter { $0 == "\n" }.count == 1, "stderr: \(outcome.stderr)")
        }
        return status
    }

    @Test func handoffctlContinueRestoresWhatAPublished() async throws {
        let laptops = try await TwoLaptops()
        let client = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: client)
        activity.title = "Release notes"
        activity.userInfo = ["scroll": 0.25, "tab": 3, "path": "/docs/notes"]
        activity.requiredUserInfoKeys = ["tab"]
        activity.webpageURL = URL(string: "https://example.org/notes")
        let notices = Mutex<[WasContinuedEvent]>([])
        let listener = Task {
            for await notice in activity.wasContinuedEvents() { notices.withLock { $0.append(notice) } }
        }
        try await activity.becomeCurrent()
        let viewer = try await laptops.b.client()
        try await eventually { try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.count == 1 }
        let nearby = try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities[0]
        #expect(nearby.hasWebpageURL)

        // An id nobody has: not-found, exit status 1.
        let unknown = try await CtlProcess.run(
            ["continue", "00000000", "--socket", laptops.b.socket], in: laptops.bus.directory)
        if let status = Self.expectCleanExit(unknown) {
            #expect(status == 1)
            #expect(unknown.stderr.contains("(not-found)"), "stderr: \(unknown.stderr)")
        }

        // The activity: no app on B declares the type, but it has a webpage URL, so it is
        // fetched as a web continuation and printed whole.
        let started = ContinuousClock.now
        let outcome = try await CtlProcess.run(
            ["continue", nearby.id, "--json", "--timeout", "10", "--socket", laptops.b.socket], in: laptops.bus.directory)
        let took = ContinuousClock.now - started
        guard let status = Self.expectCleanExit(outcome) else { return }
        #expect(status == 0, "stderr: \(outcome.stderr)")
        guard status == 0 else { return }
        print("handoffctl continue took \(took) end to end")
        let data = try JSONDecoder().decode(ContinuedEvent.self, from: Data(outcome.stdout.utf8))
        #expect(data.activity.type == TwoLaptops.type)
        #expect(data.activity.title == "Release notes")
        #expect(data.activity.userInfo == ["scroll": 0.25, "tab": 3, "path": "/docs/notes"])
        #expect(data.activity.webpageURL == "https://example.org/notes")
        #expect(data.activity.requiredUserInfoKeys == ["tab"])
        #expect(data.activity.account == "me")
        #expect(data.activity.device == nearby.device)
        // A's app is told, with B's per-epoch identifier.
        try await eventually(within: .seconds(5)) { notices.withLock { $0.count == 1 } }
        #expect(notices.withLock { $0.first?.id } == activity.publishedID)
        #expect(notices.withLock { $0.first?.byDevice.count } == 8)

        listener.cancel()
        await client.close()
        await laptops.stop()
    }

    @Test func anActivityWithoutURLOrHandlerFailsWithNoHandler() async throws {
        let laptops = try await TwoLaptops()
        let client = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: client)
        activity.title = "No web page"
        try await activity.becomeCurrent()
        let viewer = try await laptops.b.client()
        try await eventually { try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.count == 1 }
        let nearby = try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities[0]
        #expect(!nearby.hasWebpageURL)

        let outcome = try await CtlProcess.run(
            ["continue", nearby.device, "--open", "--socket", laptops.b.socket], in: laptops.bus.directory)
        if let status = Self.expectCleanExit(outcome) {
            #expect(status == 6, "stderr: \(outcome.stderr)")
            #expect(outcome.stderr.contains("(no-handler)"), "stderr: \(outcome.stderr)")
        }
        await client.close()
        await laptops.stop()
    }

    /// B's app declares the type; `continue` from HandoffKit restores the activity, and
    /// `handoffctl continue` on B forwards it to that app (application(_:continue:)).
    @Test func handoffKitContinuesAndReceivesForwardedActivities() async throws {
        let laptops = try await TwoLaptops()
        let publisher = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: publisher)
        activity.title = "Chapter 3"
        activity.userInfo = ["chapter": 3]
        try await activity.becomeCurrent()

        let app = HandoffClient(
            configuration: .init(app: "org.handoff.test.reader", handles: [TwoLaptops.type], socketPath: laptops.b.socket))
        let forwarded = Mutex<[ContinuedActivity]>([])
        let listener = Task {
            for try await restored in app.continuedActivities() { forwarded.withLock { $0.append(restored) } }
        }
        try await eventually { try await app.list().count == 1 }
        let nearby = try await app.list()[0]
        #expect(nearby.type == TwoLaptops.type)

        let restored = try await app.continue(nearby, timeout: .seconds(10))
        #expect(restored.title == "Chapter 3")
        #expect(restored.userInfo == ["chapter": 3])

        let outcome = try await CtlProcess.run(
            ["continue", nearby.id, "--socket", laptops.b.socket], in: laptops.bus.directory)
        if let status = Self.expectCleanExit(outcome) {
            #expect(status == 0, "stderr: \(outcome.stderr)")
            #expect(outcome.stdout.contains("title:    Chapter 3"))
            // Forwarded to the app that declared the type, and only once.
            try await eventually(within: .seconds(5)) { forwarded.withLock { !$0.isEmpty } }
            #expect(forwarded.withLock { $0.map(\.title) } == ["Chapter 3"])
        }

        listener.cancel()
        await app.close()
        await publisher.close()
        await laptops.stop()
    }
}
