import DBusTestSupport
import DesktopEntries
import Foundation
import HandoffKit
import Testing

/// The real handoff-agent against the independent notification server and a fake handoffd.
@Suite(.serialized)
struct AgentNotificationTests {
    static let readerEntry = """
        [Desktop Entry]
        Type=Application
        Name=Reader
        Icon=org.example.Reader
        Exec=/usr/bin/true %u
        X-Handoff-ActivityTypes=org.example.reading;
        """

    @Test func oneNotificationPerActivityReplacedOnChangeClosedOnLost() async throws {
        try await AgentHarness.run { world in
            try world.writeEntry(Self.readerEntry, named: "org.example.Reader.desktop")
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1"))
            let first = try await world.waitForNotifies(1)[0]
            #expect(first.app_name == "Reader")
            #expect(first.app_icon == "org.example.Reader")
            #expect(first.summary == "Chapter 3")
            #expect(first.replaces_id == 0)
            #expect(first.actions == ["default", "Continue", "continue", "Continue", "dismiss", "Dismiss"])
            #expect(first.hints?["image-path"] == .string("org.example.Reader"))
            #expect(first.body?.contains("Continue in Reader") == true)

            // An update that changes neither type nor title: no new notification.
            world.publishNearby(nearby("a1", rssi: -70))
            world.publishNearby(nearby("a1", rssi: -60))
            try await Task.sleep(for: .milliseconds(700))
            #expect(try await world.notifies().count == 1)

            // The title changes: the notification is replaced, under the same id.
            world.publishNearby(nearby("a1", title: "Chapter 4"))
            let second = try await world.waitForNotifies(2)[1]
            #expect(second.replaces_id == first.id)
            #expect(second.summary == "Chapter 4")

            // A second activity gets its own notification.
            world.publishNearby(nearby("b2", title: "Other"))
            let third = try await world.waitForNotifies(3)[2]
            #expect(third.replaces_id == 0)
            #expect(third.id != first.id)

            // Lost: withdrawn.
            world.loseNearby("a1")
            try await world.eventually("a1's notification is closed") {
                try await world.calls().contains { $0.method == "CloseNotification" && $0.id == first.id }
            }
            #expect(try await world.calls().filter { $0.method == "CloseNotification" }.map(\.id) == [first.id])
        }
    }

    @Test func markupIsEscapedAndTitlesSanitised() async throws {
        try await AgentHarness.run(capabilities: ["actions", "body", "body-markup"]) { world in
            try world.writeEntry(Self.readerEntry, named: "org.example.Reader.desktop")
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(
                nearby("a1", title: "Invoice\u{202E}fdp.exe\u{2066}\u{0007}\u{001B}[31m\u{0085} now", account: "R&D <team>"))
            let call = try await world.waitForNotifies(1)[0]
            #expect(call.summary == "Invoicefdp.exe[31m now")
            #expect(call.body == "Continue in Reader, from another device of R&amp;D &lt;team&gt;.")
        }
    }

    @Test func withoutBodyMarkupTheBodyIsPlain() async throws {
        try await AgentHarness.run(capabilities: ["actions", "body"]) { world in
            try world.writeEntry(Self.readerEntry, named: "org.example.Reader.desktop")
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1", account: "R&D <team>"))
            let call = try await world.waitForNotifies(1)[0]
            #expect(call.body == "Continue in Reader, from another device of R&D <team>.")
        }
    }

    @Test func withoutActionsTheBodySaysHowToContinue() async throws {
        try await AgentHarness.run(capabilities: ["body"]) { world in
            try world.writeEntry(Self.readerEntry, named: "org.example.Reader.desktop")
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1"))
            let call = try await world.waitForNotifies(1)[0]
            #expect(call.actions == [])
            #expect(call.body == "Continue in Reader, from another device of alice.\nTo continue it: handoffctl continue a1")
        }
    }

    @Test func noAppAndNoWebpageOffersNoContinue() async throws {
        try await AgentHarness.run { world in
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1", type: nil, title: nil))
            let call = try await world.waitForNotifies(1)[0]
            #expect(call.actions == ["dismiss", "Dismiss"])
            #expect(call.app_name == "Handoff")
            #expect(call.body?.hasPrefix("No app here handles this activity") == true)
            // Clicking the notification body does not continue it.
            try await world.invoke(call.id, "default")
            try await Task.sleep(for: .milliseconds(500))
            #expect(!world.daemon.requests.contains { $0.method == .continue })
        }
    }

    @Test func malformedEntriesAreSkippedAndTheNextOneWins() async throws {
        try await AgentHarness.run { world in
            // The same desktop-file ID in XDG_DATA_HOME (malformed: an unclosed quote) and in
            // XDG_DATA_DIRS (good): the malformed one is skipped, with a log line.
            try world.writeEntry(
                """
                [Desktop Entry]
                Type=Application
                Name=Broken Reader
                Exec=reader "unclosed %u
                X-Handoff-ActivityTypes=org.example.reading;
                """, named: "org.example.Reader.desktop")
            try world.writeEntry(Self.readerEntry, named: "org.example.Reader.desktop", in: world.dataDir)
            try world.writeEntry("this is not a desktop entry\n", named: "garbage.desktop")
            try world.writeEntry(
                """
                [Desktop Entry]
                Type=Application
                Name=Hidden Reader
                Exec=/usr/bin/true
                Hidden=true
                X-Handoff-ActivityTypes=org.example.hidden;
                """, named: "hidden.desktop")
            try world.writeEntry(
                """
                [Desktop Entry]
                Type=Application
                Name=Missing
                TryExec=/nonexistent/program
                Exec=/nonexistent/program %u
                X-Handoff-ActivityTypes=org.example.missing;
                """, named: "missing.desktop")
            try world.startAgent()
            try await world.waitForSubscription()
            // Only the good entry's type is declared to handoffd.
            #expect(world.withState { $0.hellos.last } == ["org.example.reading"])
            world.publishNearby(nearby("a1"))
            let call = try await world.waitForNotifies(1)[0]
            #expect(call.app_name == "Reader")
            let log = world.log
            #expect(log.contains("skipped \(world.dataHome)/org.example.Reader.desktop:4: Exec: a double quote is not closed"))
            #expect(log.contains("skipped \(world.dataHome)/garbage.desktop:1"))
            #expect(log.contains("TryExec /nonexistent/program is not an installed program"))
        }
    }

    @Test func aNewDesktopEntryIsNoticedWithoutRestart() async throws {
        try await AgentHarness.run { world in
            try world.startAgent()
            try await world.waitForSubscription()
            #expect(world.withState { $0.hellos.last } == [])
            try world.writeEntry(Self.readerEntry, named: "org.example.Reader.desktop")
            try await world.eventually("the agent declared the new type") {
                world.withState { $0.hellos.last } == ["org.example.reading"]
            }
        }
    }

    /// With no handoffd (not installed yet, stopped), the agent keeps trying, less and less
    /// often, with one warning for the whole outage; it connects once handoffd is there.
    @Test func noHandoffdMeansOneWarningAndTheAgentConnectsWhenItComes() async throws {
        try await AgentHarness.run { world in
            let later = world.root + "/later.sock"
            try world.startAgent(environment: ["HANDOFF_SOCKET": later])
            // Attempts at about 0, 1 and 3 s fail (the next waits 4 s).
            try await world.eventually("the third attempt failed") { world.log.contains("attempt 3 failed") }
            let warnings = world.log.split(separator: "\n").filter { $0.contains("warning") && $0.contains("handoffd:") }
            #expect(warnings.count == 1, "\(world.log)")
            // handoffd comes: the socket appears where the agent looks.
            #expect(symlink(world.daemon.socketPath, later) == 0)
            try await world.waitForSubscription()
            #expect(world.log.contains("handoffd answers again (after 3 failed attempts)"), "\(world.log)")
        }
    }
}
