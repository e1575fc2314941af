import DBusTestSupport
import Foundation
import HandoffKit
import Testing

/// The agent against a real notification server: dunst, drawing on Xvfb, on a private
/// session bus. What dunst shows is read back through dunst's own interfaces
/// (DunstSession), and its action is invoked the way `dunstctl action` does.
@Suite(.serialized)
struct RealNotificationServerTests {
    @Test func dunstShowsTheActivityAndItsActionLaunchesTheDeclaringApp() async throws {
        try await AgentHarness.runWithDunst { world in
            let dunst = try #require(world.dunst)
            try Self.installReader(in: world, exec: "--open %f")
            let restored = ContinuedActivity(
                type: "org.example.reading", title: "Chapter 3", userInfo: ["page": 42],
                webpageURL: "https://example.org/book#3", account: "alice", device: "0a0b0c0d")
            world.withState { $0.continued["a1"] = restored }
            try world.startAgent()
            try await world.waitForSubscription()
            #expect(try await dunst.displayed() == 0)
            // A title from another device, with a bidi override and control characters.
            world.publishNearby(nearby("a1", title: "Chapter\u{200F}\u{202E} 3\u{0007}\u{001B}"))

            let shown = try await Self.theOneShown(by: dunst, in: world)
            #expect(shown.appName == "Reader")
            #expect(shown.summary == "Chapter 3")
            #expect(shown.body.hasPrefix("Continue in Reader, from another device of alice"))
            #expect(shown.desktopEntry == "org.example.Reader")
            #expect(shown.category == "x-handoff.activity")
            #expect(shown.timeout == "0")

            // The default action, as a click or `dunstctl action 0` does it.
            try await dunst.action(at: 0)
            let argv = try await world.recordedArguments("reader")
            #expect(argv.count == 2)
            guard argv.count == 2 else { return }
            #expect(argv[0] == "--open")
            #expect(argv[1].hasPrefix("\(world.runtimeDir)/handoff/continued/c7-"))
            let handed = try JSONDecoder().decode(
                HandedOverActivity.self, from: Data(contentsOf: URL(fileURLWithPath: world.root + "/out/reader.handed")))
            #expect(handed.activity == restored)
            #expect(handed.nearbyID == "a1")

            // Continued: the agent withdraws it, and dunst moves it to its history.
            try await world.eventually("dunst no longer shows it") {
                let history = try await dunst.historySummaries()
                return try await dunst.displayed() == 0 && history == ["Chapter 3"]
            }
        }
    }

    /// A desktop entry for "Reader", declaring org.example.reading, whose Exec starts the
    /// recorder `reader` with `arguments`.
    static func installReader(in world: AgentHarness, exec arguments: String) throws {
        let app = try world.recorder("reader")
        try world.writeEntry(
            """
            [Desktop Entry]
            Type=Application
            Name=Reader
            Icon=reader
            Exec=\(app) \(arguments)
            X-Handoff-ActivityTypes=org.example.reading;
            """, named: "org.example.Reader.desktop")
    }

    /// Waits until dunst shows exactly one notification, and returns what its script recorded.
    static func theOneShown(by dunst: DunstSession, in world: AgentHarness) async throws -> DunstSession.Shown {
        try await world.eventually("dunst shows one notification") {
            try await dunst.displayed() == 1 && dunst.shown().count == 1
        }
        return try #require(dunst.shown().first)
    }

    @Test func aWebpageOnlyActivityReachesTheBrowserThroughDunst() async throws {
        try await AgentHarness.runWithDunst { world in
            let dunst = try #require(world.dunst)
            let browser = try world.recorder("browser")
            let url = "https://example.org/p?q=1&r=$(id)"
            world.withState {
                $0.continued["w1"] = ContinuedActivity(
                    type: "org.unknown.type", title: "A page", webpageURL: url, account: "alice", device: "0a0b0c0d")
            }
            try world.startAgent(environment: ["BROWSER": "\(browser) %s"])
            try await world.waitForSubscription()
            world.publishNearby(nearby("w1", type: nil, title: "A page", hasWebpageURL: true))
            let shown = try await Self.theOneShown(by: dunst, in: world)
            #expect(shown.appName == "Handoff")
            #expect(shown.summary == "A page")
            #expect(shown.body.hasPrefix("Open it in the web browser"))

            try await dunst.action(at: 0)
            #expect(try await world.recordedArguments("browser") == [url])
            try await world.eventually("dunst no longer shows it") { try await dunst.displayed() == 0 }
        }
    }

    @Test func dunstsContextMenuOffersContinueAndDismissAndContinueLaunchesTheApp() async throws {
        try await AgentHarness.runWithDunst { world in
            let dunst = try #require(world.dunst)
            try Self.installReader(in: world, exec: "%u")
            let restored = ContinuedActivity(type: "org.example.reading", title: "Chapter 3", account: "alice", device: "0a0b0c0d")
            world.withState { $0.continued["a1"] = restored }
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1", title: "Chapter 3"))
            let shown = try await Self.theOneShown(by: dunst, in: world)

            // The buttons as dunst offers them: Continue (also the default action) and Dismiss.
            let menu = try await dunst.contextMenu(choosing: "continue")
            #expect(Set(menu) == [
                "#Continue (Chapter 3) [\(shown.id),continue]", "#Continue (Chapter 3) [\(shown.id),default]",
                "#Dismiss (Chapter 3) [\(shown.id),dismiss]",
            ])
            let argv = try await world.recordedArguments("reader")
            #expect(argv.count == 1)
            let handed = try JSONDecoder().decode(
                HandedOverActivity.self, from: Data(contentsOf: URL(fileURLWithPath: world.root + "/out/reader.handed")))
            #expect(handed.activity == restored)
        }
    }

    @Test func dismissingInDunstWithdrawsItUntilTheActivityChanges() async throws {
        try await AgentHarness.runWithDunst { world in
            let dunst = try #require(world.dunst)
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1", type: nil, title: "Chapter 3", hasWebpageURL: true))
            _ = try await Self.theOneShown(by: dunst, in: world)
            _ = try await dunst.contextMenu(choosing: "dismiss")
            try await world.eventually("dunst no longer shows it") { try await dunst.displayed() == 0 }
            // A new signal strength changes nothing; a new title shows it again.
            world.publishNearby(nearby("a1", type: nil, title: "Chapter 3", hasWebpageURL: true, rssi: -80))
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await dunst.displayed() == 0)
            world.publishNearby(nearby("a1", type: nil, title: "Chapter 4", hasWebpageURL: true))
            try await world.eventually("dunst shows the new title") {
                try await dunst.displayed() == 1 && dunst.shown().last?.summary == "Chapter 4"
            }
        }
    }

    @Test func aLostActivityLeavesDunstsScreen() async throws {
        try await AgentHarness.runWithDunst { world in
            let dunst = try #require(world.dunst)
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1", type: nil, title: "Gone soon", hasWebpageURL: true))
            try await world.eventually("dunst shows it") { try await dunst.displayed() == 1 }
            world.loseNearby("a1")
            try await world.eventually("dunst no longer shows it") {
                let history = try await dunst.historySummaries()
                return try await dunst.displayed() == 0 && history == ["Gone soon"]
            }
        }
    }
}
