import Foundation
import HandoffProtocol
import HandoffTestSupport
import Testing

/// `handoffctl continue` end to end, against a daemon scripted to continue as docs/protocol.md says.
@Suite(.enabled(if: HandoffCtl.isAvailable, "handoffctl is not built"), .timeLimit(.minutes(1)))
struct ContinueCommandTests {
    static let restored = ContinuedActivity(
        type: "org.example.viewing", title: "Release notes", userInfo: ["scroll": 0.25, "tab": 3, "note": "a\nb"],
        webpageURL: "https://example.org/notes", requiredUserInfoKeys: ["tab"], account: "alice", device: "8c41d2f0")

    static func daemon(_ script: ScriptedDaemon.ContinueScript, for id: String = "n1") throws -> ScriptedDaemon {
        var state = ScriptedDaemon.State()
        state.activities = [sampleActivity(id: "n1")]
        state.continuations = [id: script]
        return try ScriptedDaemon(state)
    }

    @Test func printsTheRestoredActivity() async throws {
        let daemon = try Self.daemon(.succeed(Self.restored))
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["continue", "n1", "--socket", daemon.socketPath])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(
            outcome.stdout == """
                type:     org.example.viewing
                title:    Release notes
                url:      https://example.org/notes
                device:   8c41d2f0 (account alice)
                required: tab
                userInfo:
                  {
                    "note" : "a\\nb",
                    "scroll" : 0.25,
                    "tab" : 3
                  }

                """)
        let hello = try #require(daemon.requests.first)
        #expect(try hello.params(HelloParams.self).handles ?? [] == [], "handoffctl declares no type, so an app that does gets it")
        #expect(try daemon.requests.first { $0.method == .continue }?.params(ContinueParams.self) == ContinueParams(id: "n1"))
    }

    @Test func jsonPrintsTheContinuedDataUnchanged() async throws {
        let daemon = try Self.daemon(.succeed(Self.restored))
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["continue", "n1", "--json", "--timeout", "25", "--socket", daemon.socketPath])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        let expected = try WireFormat.compactJSON(ContinuedEvent(continuation: "c1", activity: Self.restored))
        #expect(outcome.stdout == String(decoding: expected, as: UTF8.self) + "\n")
        #expect(try daemon.requests.first { $0.method == .continue }?.params(ContinueParams.self).timeout == 25)
    }

    @Test func theDeviceFromListWorksAsTheID() async throws {
        let daemon = try Self.daemon(.succeed(Self.restored))
        defer { daemon.stop() }
        // sampleActivity's device is 0a0b0c0d; its id is n1.
        let outcome = try await HandoffCtl.run(["continue", "0A0B0C0D", "--json", "--socket", daemon.socketPath])
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(try daemon.requests.first { $0.method == .continue }?.params(ContinueParams.self).id == "n1")
    }

    @Test func eachFailureCodeHasItsMessageAndExitStatus() async throws {
        let statuses: [ContinueError.Code: Int32] = [
            .outOfRange: 3, .timeout: 4, .rejected: 5, .noHandler: 6, .payloadInvalid: 7, .cancelled: 8,
            .streamsUnsupported: 10,
        ]
        for code in ContinueError.Code.allCases {
            let daemon = try Self.daemon(.fail(code, "the daemon's words"))
            defer { daemon.stop() }
            let outcome = try await HandoffCtl.run(["continue", "n1", "--socket", daemon.socketPath])
            #expect(outcome.status == statuses[code], "\(code): \(outcome.stderr)")
            #expect(outcome.stdout.isEmpty)
            #expect(outcome.stderr == "handoffctl: \(code.meaning): the daemon's words (\(code.rawValue))\n")
        }
    }

    @Test func anUnknownIDIsReportedWithTheDaemonsMessage() async throws {
        let daemon = try Self.daemon(.succeed(Self.restored))
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["continue", "zz99", "--socket", daemon.socketPath])
        #expect(outcome.status == 1)
        #expect(outcome.stderr == "handoffctl: no nearby activity \"zz99\" (not-found)\n")
    }

    @Test func badTimeoutsAreUsageErrors() async throws {
        for value in ["0.5", "61", "soon"] {
            let outcome = try await HandoffCtl.run(["continue", "n1", "--timeout", value, "--socket", "/nonexistent"])
            #expect(outcome.status == 2, "--timeout \(value): \(outcome.stderr)")
        }
    }

    @Test func interruptingCancelsTheContinuation() async throws {
        let daemon = try Self.daemon(.never)
        defer { daemon.stop() }
        let (process, out, err) = try HandoffCtl.start(["continue", "n1", "--socket", daemon.socketPath])
        try await daemon.daemon.waitUntil { $0.requests.contains { $0.method == .continue } }
        try await Task.sleep(for: .milliseconds(100))
        process.interrupt()
        let outcome = try await HandoffCtl.finish(process, out, err)
        #expect(outcome.status == 8)
        #expect(outcome.stderr == "handoffctl: interrupted: the continuation was cancelled\n")
        let cancel = try #require(daemon.requests.first { $0.method == .continueCancel })
        #expect(try cancel.params(ContinuationParams.self).continuation == "c1")
    }

    // MARK: --open

    /// A directory holding a fake `xdg-open` that records its arguments, to put first in PATH.
    struct FakeOpener {
        let directory: URL
        var record: URL { directory.appendingPathComponent("arguments") }

        init(exitStatus: Int32 = 0) throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("xdg-\(UUID().uuidString.prefix(8))")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let script = directory.appendingPathComponent("xdg-open")
            try "#!/bin/sh\nprintf '%s\\n' \"$#\" \"$@\" > '\(record.path)'\nexit \(exitStatus)\n"
                .write(to: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        }

        var environment: [String: String] {
            ["PATH": directory.path + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        }

        /// What xdg-open was given: the argument count, then each argument.
        var arguments: [String]? {
            (try? String(contentsOf: record, encoding: .utf8)).map { $0.split(separator: "\n").map(String.init) }
        }

        func remove() { try? FileManager.default.removeItem(at: directory) }
    }

    @Test func openHandsTheURLToXdgOpenAsOneArgument() async throws {
        var activity = Self.restored
        activity.webpageURL = "https://example.org/notes?a=1&b=$(touch%20x);c"
        let daemon = try Self.daemon(.succeed(activity))
        defer { daemon.stop() }
        let opener = try FakeOpener()
        defer { opener.remove() }
        let outcome = try await HandoffCtl.run(
            ["continue", "n1", "--open", "--socket", daemon.socketPath], environment: opener.environment)
        #expect(outcome.status == 0, "\(outcome.stderr)")
        #expect(opener.arguments == ["1", "https://example.org/notes?a=1&b=$(touch%20x);c"])
        #expect(outcome.stdout.contains("url:      https://example.org/notes?a=1&b=$(touch%20x);c\n"))
    }

    @Test func openRefusesOtherSchemesAndSaysWhenThereIsNoURL() async throws {
        let opener = try FakeOpener()
        defer { opener.remove() }
        for (url, message) in [
            ("file:///etc/passwd", "refusing to open \"file:///etc/passwd\": only http and https URLs are opened"),
            ("javascript:alert(1)", "refusing to open \"javascript:alert(1)\": only http and https URLs are opened"),
            (nil, "the activity has no webpage URL, so there is nothing to open"),
        ] as [(String?, String)] {
            var activity = Self.restored
            activity.webpageURL = url
            let daemon = try Self.daemon(.succeed(activity))
            defer { daemon.stop() }
            let outcome = try await HandoffCtl.run(
                ["continue", "n1", "--open", "--socket", daemon.socketPath], environment: opener.environment)
            #expect(outcome.status == 9)
            #expect(outcome.stderr == "handoffctl: \(message)\n")
            #expect(outcome.stdout.hasPrefix("type:     org.example.viewing\n"), "the activity is still printed")
            #expect(opener.arguments == nil, "xdg-open must not run")
        }
    }

    @Test func aFailingOrMissingXdgOpenIsReported() async throws {
        let daemon = try Self.daemon(.succeed(Self.restored))
        defer { daemon.stop() }
        let failing = try FakeOpener(exitStatus: 4)
        defer { failing.remove() }
        let failed = try await HandoffCtl.run(
            ["continue", "n1", "--open", "--socket", daemon.socketPath], environment: failing.environment)
        #expect(failed.status == 9)
        #expect(failed.stderr == "handoffctl: xdg-open could not open https://example.org/notes (exit status 4)\n")

        let empty = FileManager.default.temporaryDirectory.appendingPathComponent("empty-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: empty) }
        let missing = try await HandoffCtl.run(
            ["continue", "n1", "--open", "--socket", daemon.socketPath], environment: ["PATH": empty.path])
        #expect(missing.status == 9)
        #expect(
            missing.stderr
                == "handoffctl: cannot open https://example.org/notes: xdg-open is not installed (apt install xdg-utils)\n")
    }
}
