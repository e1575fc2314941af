import ArgumentParser
import Foundation
import HandoffKit

/// Laptop B: pick up what laptop A is viewing.
struct ContinueURL: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continue",
        abstract: "Continue the URL your other laptop is viewing, and print what was restored.",
        discussion: """
            Declares the activity type, waits until an activity of that type is nearby, \
            continues it and prints the restored state. With --wait, does not continue \
            anything itself but waits for an activity that another program continues for \
            it, such as 'handoffctl continue ID'.
            """)

    @OptionGroup var options: SocketOption

    @Flag(help: "Wait for an activity continued for this app by another program (handoffctl continue).")
    var wait = false

    @Option(help: "Give up after this many seconds.")
    var within: Double = 60

    func run() async throws {
        // Declaring the type makes handoffd name it in nearby activities, and forward
        // continuations of it to this app.
        let client = HandoffClient(app: Viewer.appName, handles: [Viewer.activityType], socketPath: options.socket)
        let (wait, within) = (self.wait, self.within)
        let restored = try await withThrowingTaskGroup(of: ContinuedActivity?.self) { group in
            group.addTask {
                wait ? try await Self.waitForForwarded(client) : try await Self.continueNearby(client)
            }
            group.addTask {
                try await Task.sleep(for: .seconds(within))
                return nil
            }
            let first = try await group.next() ?? nil
            group.cancelAll()
            return first
        }
        guard let restored else {
            throw ViewerError(description: "nothing to continue within \(within) seconds")
        }
        let viewing = try restored.userInfo(as: Viewing.self)
        say("Restored from device \(restored.device) (account \(restored.account)):")
        say("  title:  \(restored.title ?? "-")")
        say("  url:    \(viewing.url)")
        say("  scroll: \(viewing.scroll)")
        if let page = restored.webpage { say("  open it with: xdg-open '\(page.absoluteString)'") }
    }

    /// Waits for a nearby activity of our type and continues it.
    static func continueNearby(_ client: HandoffClient) async throws -> ContinuedActivity? {
        say("Waiting for a nearby \(Viewer.activityType) activity…")
        for try await change in client.nearby(types: [Viewer.activityType]) {
            guard case .appeared(let nearby) = change else { continue }
            say("Found one on device \(nearby.device); continuing…")
            do {
                return try await client.continue(nearby) { will in
                    say("handoffd is fetching it (continuation \(will.continuation)).")
                }
            } catch let error as ContinueError {
                say("Could not continue: \(error)")  // out of range, timeout, …: wait for the next
            }
        }
        return nil
    }

    /// Waits for an activity another program continued for this app (application(_:continue:)).
    static func waitForForwarded(_ client: HandoffClient) async throws -> ContinuedActivity? {
        try await client.connect()
        say("Waiting for an activity continued for this app (try: handoffctl continue ID)…")
        for try await restored in client.continuedActivities() {
            return restored
        }
        return nil
    }
}
