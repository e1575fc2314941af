import DBusTestSupport
import Foundation
import HandoffKit
import Testing

/// Continue, from the notification's action to the app's argv.
@Suite(.serialized)
struct AgentContinueTests {
    /// A title and userInfo full of shell metacharacters, which must reach the app unchanged.
    static let hostile = "\"; touch pwned; echo $(id) `id` | cat & exit 1 '"

    @Test func continueLaunchesTheDeclaringAppWithTheExactArguments() async throws {
        try await AgentHarness.run { world in
            let app = try world.recorder("reader")
            // %c is the Name, which carries shell metacharacters; "two words" is one argument.
            try world.writeEntry(
                """
                [Desktop Entry]
                Type=Application
                Name=Reader $(touch \(world.root)/out/pwned); `id` | cat
                Icon=reader
                Exec=\(app) --continue %u "two words" "a \\\\$HOME b" %c %i %k
                X-Handoff-ActivityTypes=org.example.other;org.example.reading;
                """, named: "org.example.Reader.desktop")
            let restored = ContinuedActivity(
                type: "org.example.reading", title: Self.hostile, userInfo: ["cmd": .string(Self.hostile)],
                webpageURL: "https://example.org/notes", account: "alice", device: "0a0b0c0d")
            world.withState { $0.continued["a1"] = restored }
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1"))
            let call = try await world.waitForNotifies(1)[0]
            try await world.invoke(call.id, "continue")

            let argv = try await world.recordedArguments("reader")
            #expect(argv.count == 8)
            guard argv.count == 8 else { return }
            #expect(argv[0] == "--continue")
            #expect(argv[1].hasPrefix("file://\(world.runtimeDir)/handoff/continued/c7-"))
            #expect(argv[1].hasSuffix(HandedOverActivity.fileSuffix))
            #expect(Array(argv[2...]) == [
                "two words", "a $HOME b", "Reader $(touch \(world.root)/out/pwned); `id` | cat", "--icon", "reader",
                "\(world.dataHome)/org.example.Reader.desktop",
            ])
            // The hand-over: private, and the activity exactly as restored.
            let mode = try String(contentsOfFile: world.root + "/out/reader.mode", encoding: .utf8)
            #expect(mode.trimmingCharacters(in: .whitespacesAndNewlines) == "600")
            let handed = try JSONDecoder().decode(
                HandedOverActivity.self, from: Data(contentsOf: URL(fileURLWithPath: world.root + "/out/reader.handed")))
            #expect(handed.activity == restored)
            #expect(handed.continuation == "c7")
            #expect(handed.nearbyID == "a1")
            // The app's own reading of its arguments finds the same file.
            let path = HandedOverActivity.location(arguments: ["reader"] + argv, environment: [:])
            #expect(path == URL(string: argv[1])?.path)
            // Nothing ran through a shell.
            #expect(!FileManager.default.fileExists(atPath: world.root + "/out/pwned"))
            // Continued: the notification is withdrawn.
            try await world.eventually("the notification is closed") {
                try await world.calls().contains { $0.method == "CloseNotification" && $0.id == call.id }
            }
        }
    }

    @Test func aWebpageWithoutAppGoesToBrowser() async throws {
        try await AgentHarness.run { world in
            let browser = try world.recorder("browser")
            let url = "https://example.org/p;a?q=1&r=$(touch%20pwned)|x"
            world.withState {
                $0.continued["w1"] = ContinuedActivity(
                    type: "org.unknown.type", title: "Page", webpageURL: url, account: "alice", device: "0a0b0c0d")
            }
            // As xdg-open reads BROWSER: commands separated by ':', %s for the URL.
            try world.startAgent(environment: ["BROWSER": "/nonexistent/browser:\(browser) --new-tab %s"])
            try await world.waitForSubscription()
            world.publishNearby(nearby("w1", type: nil, title: "Page", hasWebpageURL: true))
            let call = try await world.waitForNotifies(1)[0]
            #expect(call.actions == ["default", "Continue", "continue", "Continue", "dismiss", "Dismiss"])
            #expect(call.body?.hasPrefix("Open it in the web browser") == true)
            try await world.invoke(call.id, "default")
            // Exactly one argument for the URL, unchanged: no shell split or expanded it.
            #expect(try await world.recordedArguments("browser") == ["--new-tab", url])
        }
    }

    @Test func aDBusActivatableAppIsOpenedWithTheHandOver() async throws {
        try await AgentHarness.run { world in
            let record = world.root + "/out/opened"
            let script = AgentHarness.serverScript.replacingOccurrences(of: "notification_server.py", with: "activatable_app.py")
            let app = try world.bus.startPython(script, ["org.example.Live-Reader", record])
            try await app.waitForName("org.example.Live-Reader", on: world.observer)
            try world.writeEntry(
                """
                [Desktop Entry]
                Type=Application
                Name=Live Reader
                DBusActivatable=true
                X-Handoff-ActivityTypes=org.example.reading;
                """, named: "org.example.Live-Reader.desktop")
            let restored = ContinuedActivity(type: "org.example.reading", title: "T", account: "alice", device: "0a0b0c0d")
            world.withState { $0.continued["a1"] = restored }
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1"))
            let call = try await world.waitForNotifies(1)[0]
            try await world.invoke(call.id, "continue")
            try await world.eventually("Open was called") { FileManager.default.fileExists(atPath: record) }
            let uris = try String(contentsOfFile: record, encoding: .utf8).split(separator: "\n").map(String.init)
            #expect(uris.count == 1)
            let path = try #require(URL(string: uris.first ?? "")?.path)
            let handed = try HandedOverActivity.read(path: path)
            #expect(handed.activity == restored)
        }
    }

    @Test func aDismissedNotificationStaysAwayUntilTheActivityChanges() async throws {
        try await AgentHarness.run { world in
            try world.startAgent()
            try await world.waitForSubscription()
            world.publishNearby(nearby("a1", type: nil, hasWebpageURL: true))
            let call = try await world.waitForNotifies(1)[0]
            try await world.invoke(call.id, "dismiss")
            try await world.eventually("dismissed") {
                try await world.calls().contains { $0.method == "CloseNotification" && $0.id == call.id }
            }
            world.publishNearby(nearby("a1", type: nil, hasWebpageURL: true, rssi: -80))
            try await Task.sleep(for: .milliseconds(500))
            #expect(try await world.notifies().count == 1)
            world.publishNearby(nearby("a1", type: nil, title: "Chapter 9", hasWebpageURL: true))
            let again = try await world.waitForNotifies(2)[1]
            #expect(again.summary == "Chapter 9")
        }
    }
}
