import Foundation
import HandoffProtocol
import HandoffTestSupport
import Testing

/// `handoffctl` end to end, against a scripted fake daemon.
@Suite(.enabled(if: HandoffCtl.isAvailable, "handoffctl is not built"), .timeLimit(.minutes(1)))
struct HandoffCtlTests {
    /// A known type seen `age` seconds ago, and an unknown one seen 2 minutes ago.
    static func twoActivities(now: Date, title: String?, age: TimeInterval) -> [NearbyActivity] {
        [
            NearbyActivity(
                id: "n1", account: "alice", device: "0a0b0c0d", type: "org.example.viewing", typeHash: "11223344",
                title: title, hasPayload: true, hasWebpageURL: true, supportsStreams: false, rssi: -52.4,
                firstSeen: now, lastSeen: now.addingTimeInterval(-age)),
            NearbyActivity(
                id: "n2", account: "work", device: "99aabbcc", type: nil, typeHash: "deadbeef", title: nil,
                hasPayload: false, hasWebpageURL: false, supportsStreams: false, rssi: nil,
                firstSeen: now, lastSeen: now.addingTimeInterval(-125)),
        ]
    }

    @Test func listPrintsATable() async throws {
        let now = Date()
        var state = ScriptedDaemon.State()
        state.activities = Self.twoActivities(now: now, title: "Release notes", age: 3 * 3600 + 10)
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["list", "--socket", daemon.socketPath])
        #expect(outcome.status == 0)
        let lines = outcome.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines[0] == "DEVICE    ACCOUNT  TYPE                          TITLE          RSSI     LAST SEEN")
        // Newest first.
        #expect(lines[1] == "99aabbcc  work     unknown type (hash deadbeef)  -              -        2m ago")
        #expect(lines[2] == "0a0b0c0d  alice    org.example.viewing           Release notes  -52 dBm  3h ago")
    }

    /// A desktop entry declaring `types`, in a fresh XDG_DATA_HOME; returns that environment.
    static func applications(_ entries: [String: String]) throws -> [String: String] {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("handoffctl-\(UUID().uuidString)")
        let directory = home.appendingPathComponent("applications/vendor")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (name, text) in entries {
            try text.write(to: directory.appendingPathComponent(name), atomically: true, encoding: .utf8)
        }
        return ["XDG_DATA_HOME": home.path]
    }

    static let viewerEntry = """
        [Desktop Entry]
        Type=Application
        Name=Viewer
        Exec=/usr/bin/true %u
        X-Handoff-ActivityTypes=org.example.viewing;
        """

    @Test func listNamesTheAppADesktopEntryDeclaresAndLeavesOutEmptyColumns() async throws {
        let now = Date()
        var state = ScriptedDaemon.State()
        state.activities = Self.twoActivities(now: now, title: nil, age: 1800)
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let environment = try Self.applications(["org.example.Viewer.desktop": Self.viewerEntry])
        let outcome = try await HandoffCtl.run(["list", "--socket", daemon.socketPath], environment: environment)
        #expect(outcome.status == 0)
        let lines = outcome.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        // No title is known: no TITLE column. The entry is vendor/org.example.Viewer.desktop.
        #expect(lines[0] == "DEVICE    ACCOUNT  APP     TYPE                          RSSI     LAST SEEN")
        #expect(lines[1] == "99aabbcc  work     -       unknown type (hash deadbeef)  -        2m ago")
        #expect(lines[2] == "0a0b0c0d  alice    Viewer  org.example.viewing           -52 dBm  30m ago")

        // Without the desktop entry, no APP column either.
        let plain = try await HandoffCtl.run(["list", "--socket", daemon.socketPath])
        #expect(plain.stdout.split(separator: "\n").first == "DEVICE    ACCOUNT  TYPE                          RSSI     LAST SEEN")
    }

    @Test func listJSONAddsTheAppToActivitiesOfDeclaredTypes() async throws {
        var state = ScriptedDaemon.State()
        let declared = sampleActivity(id: "n1", type: "org.example.viewing")
        let other = sampleActivity(id: "n2", type: "org.example.other")
        state.activities = [declared, other]
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let environment = try Self.applications(["org.example.Viewer.desktop": Self.viewerEntry])
        let outcome = try await HandoffCtl.run(["list", "--json", "--socket", daemon.socketPath], environment: environment)
        #expect(outcome.status == 0)
        let printed = try JSONDecoder().decode(JSONValue.self, from: Data(outcome.stdout.utf8))
        guard case .object(let object) = printed, case .array(let activities)? = object["activities"],
            activities.count == 2, case .object(var first) = activities[0], case .object(let second) = activities[1]
        else {
            Issue.record("not a list result: \(outcome.stdout)")
            return
        }
        #expect(first.removeValue(forKey: "app") == ["name": "Viewer", "desktopEntry": "vendor-org.example.Viewer"])
        #expect(second["app"] == nil)
        // Everything else is the daemon's result unchanged.
        let daemonResult = try JSONDecoder().decode(
            JSONValue.self, from: try WireFormat.compactJSON(ListResult(activities: [declared, other])))
        #expect(JSONValue.object(["activities": .array([.object(first), .object(second)])]) == daemonResult)
    }

    @Test func listSaysSoWhenNothingIsNearby() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["list", "--socket", daemon.socketPath])
        #expect(outcome.stdout == "No nearby activities.\n")
        #expect(outcome.status == 0)
    }

    @Test func jsonOutputIsTheResultAsTheDaemonEncodesIt() async throws {
        var state = ScriptedDaemon.State()
        state.activities = [sampleActivity()]
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        for (command, result) in [
            ("list", try WireFormat.compactJSON(ListResult(activities: [sampleActivity()]))),
            ("status", try WireFormat.compactJSON(ScriptedDaemon.healthyStatus)),
        ] {
            let outcome = try await HandoffCtl.run([command, "--json", "--socket", daemon.socketPath])
            #expect(outcome.stdout == String(decoding: result, as: UTF8.self) + "\n")
        }
    }

    @Test func theSocketCanComeFromTheEnvironment() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["list"], environment: ["HANDOFF_SOCKET": daemon.socketPath])
        #expect(outcome.status == 0)
        #expect(outcome.stdout == "No nearby activities.\n")
    }

    @Test func statusPrintsAlignedLines() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["status", "--socket", daemon.socketPath])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.contains("adapter:      hci0 (00:1A:7D:DA:71:13)\n"))
        #expect(outcome.stdout.contains("continuation: available (LE privacy on, hci0)\n"))
        #expect(outcome.stdout.contains("last error:   none\n"))
        #expect(outcome.stdout.contains("beacons:      12 recognized, 3 rejected, 4 copies refused\n"))
        #expect(
            outcome.stdout.contains(
                "scan drops:   7 report(s) lost: the daemon fell behind the radio or heard unannounced devices (see its log)\n"))
    }

    @Test func aMissingDaemonIsReportedOnStandardError() async throws {
        let outcome = try await HandoffCtl.run(["list", "--socket", FakeDaemon.temporarySocketPath()])
        #expect(outcome.status == 1)
        #expect(outcome.stdout.isEmpty)
        #expect(outcome.stderr == "handoffctl: handoffd is not running (start it with: systemctl start handoffd)\n")
    }

    @Test func usageErrorsExitWithStatus2() async throws {
        let outcome = try await HandoffCtl.run(["publish", "--title", "no type"])
        #expect(outcome.status == 2)
        #expect(outcome.stderr.hasPrefix("handoffctl: Missing expected argument '--type <type>'"))
        let bad = try await HandoffCtl.run(["publish", "--type", "a.b", "--info", "novalue"])
        #expect(bad.status == 2)
        #expect(bad.stderr.contains("--info takes key=value"))
    }

    @Test func daemonErrorsAreReportedWithTheirMessage() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["account", "export", "nobody", "--socket", daemon.socketPath])
        #expect(outcome.status == 1)
        #expect(outcome.stderr == "handoffctl: no account named \"nobody\" (not-found)\n")
    }

    @Test func publishSendsUserInfoAndInvalidatesOnInterrupt() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let (process, out, err) = try HandoffCtl.start([
            "publish", "--socket", daemon.socketPath, "--type", "org.example.viewing", "--title", "Docs",
            "--url", "https://example.org/docs", "--info-json", "{\"d\":[1],\"a\":\"replaced\"}",
            "--info", "a=1", "--info", "b=true", "--info", "c=hello world", "--info", "e=-2.5",
        ])
        try await daemon.daemon.waitUntil { $0.requests.contains { $0.method == .publish } }
        try await Task.sleep(for: .milliseconds(200))
        process.interrupt()
        let outcome = try await HandoffCtl.finish(process, out, err)
        #expect(outcome.status == 0)
        #expect(outcome.stdout.hasPrefix("a1b2c3\nPublishing org.example.viewing \"Docs\" (Ctrl-C to stop)\n"))
        let publish = try #require(daemon.requests.first { $0.method == .publish })
        let params = try publish.params(PublishParams.self)
        #expect(params.userInfo == ["a": 1, "b": true, "c": "hello world", "d": [1], "e": -2.5])
        #expect(params.webpageURL == "https://example.org/docs")
        let invalidate = try #require(daemon.requests.first { $0.method == .invalidate })
        #expect(try invalidate.params(ActivityIDParams.self).id == "a1b2c3")
    }

    @Test func publishForADurationStopsByItself() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run([
            "publish", "--socket", daemon.socketPath, "--type", "org.example.viewing", "--for", "0.3s",
        ])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.contains("Publishing org.example.viewing for 0.3s (Ctrl-C to stop)"))
        let publish = try #require(daemon.requests.first { $0.method == .publish })
        #expect(try publish.params(PublishParams.self).expiresIn == 0.3)
        #expect(daemon.requests.contains { $0.method == .invalidate })
    }

    @Test func exportGroupsTheCodeForReadingAloud() async throws {
        var state = ScriptedDaemon.State()
        state.accounts = [AccountInfo(name: "alice", fingerprint: "3f2a91c0", owner: 1000)]
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["account", "export", "alice", "--socket", daemon.socketPath])
        #expect(outcome.status == 0)
        #expect(
            outcome.stdout == """
                Export code for account alice:

                    2000 G40R 40M3 0E20 9185 GR38 E1W8
                    124G K2GA HC5R R34D 1P70 X3RF GR6N

                On your other laptop run: handoffctl account import '\(ScriptedDaemon.sampleCode)'

                """)
    }

    @Test func removeNeedsYesWithoutATerminal() async throws {
        var state = ScriptedDaemon.State()
        state.accounts = [AccountInfo(name: "alice", fingerprint: "3f2a91c0", owner: 1000)]
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let refused = try await HandoffCtl.run(["account", "remove", "alice", "--socket", daemon.socketPath])
        #expect(refused.status == 1)
        #expect(refused.stderr == "handoffctl: not removing account alice without confirmation: run with --yes\n")
        #expect(!daemon.requests.contains { $0.method == .accountRemove })
        let removed = try await HandoffCtl.run(["account", "remove", "alice", "--yes", "--socket", daemon.socketPath])
        #expect(removed.status == 0)
        #expect(removed.stdout == "Removed account alice.\n")
        #expect(daemon.withState { $0.accounts.isEmpty })
    }

    @Test func devicesRemoveNeedsYesAndSaysWhoWaitsForTheNewKey() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let refused = try await HandoffCtl.run(["devices", "remove", "old laptop", "--socket", daemon.socketPath])
        #expect(refused.status == 1)
        #expect(refused.stderr == "handoffctl: not removing old laptop without confirmation: run with --yes\n")
        #expect(!daemon.requests.contains { $0.method == .devicesRemove })
        let removed = try await HandoffCtl.run(["devices", "remove", "old laptop", "--yes", "--socket", daemon.socketPath])
        #expect(removed.status == 0)
        let lines = removed.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "Removed old laptop (9c1f2e3d4b5a6978) from account alice.")
        #expect(lines.contains("desk (5d2e7a90c1b3f468) gets the new key the next time it is nearby."))
        let unknown = try await HandoffCtl.run(["devices", "remove", "nobody", "--yes", "--socket", daemon.socketPath])
        #expect(unknown.status == 1)
        #expect(unknown.stderr.contains("no device \"nobody\""))
        // Without a subcommand: the list, as before.
        let listed = try await HandoffCtl.run(["devices", "--json", "--socket", daemon.socketPath])
        #expect(listed.status == 0)
        #expect(listed.stdout.hasPrefix("{"))
    }

    @Test func pairCreatesAnAccountNamedAfterTheUserThenImportsOnTheOtherSide() async throws {
        let first = try ScriptedDaemon()
        defer { first.stop() }
        let outcome = try await HandoffCtl.run(["pair", "--socket", first.socketPath], environment: ["USER": "carol"])
        #expect(outcome.status == 0)
        #expect(outcome.stdout.hasPrefix("Created account carol on this laptop.\n"))
        #expect(outcome.stdout.contains("handoffctl pair '\(ScriptedDaemon.sampleCode)'"))

        let second = try ScriptedDaemon()
        defer { second.stop() }
        let paired = try await HandoffCtl.run(["pair", ScriptedDaemon.sampleCode, "--socket", second.socketPath])
        #expect(paired.status == 0)
        #expect(paired.stdout.hasPrefix("Paired: this laptop now shares account imported"))
        let request = try #require(second.requests.first { $0.method == .accountImport })
        #expect(try request.params(AccountImportParams.self) == AccountImportParams(code: ScriptedDaemon.sampleCode))
    }

    @Test func pairReusesAnExistingAccount() async throws {
        var state = ScriptedDaemon.State()
        state.accounts = [AccountInfo(name: "alice", fingerprint: "3f2a91c0", owner: getuid())]
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["pair", "--socket", daemon.socketPath])
        #expect(outcome.stdout.hasPrefix("This laptop already has account alice.\n"))
        #expect(!daemon.requests.contains { $0.method == .accountCreate })
    }

    @Test func doctorPassesOnAHealthyDaemon() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["doctor", "--socket", daemon.socketPath])
        #expect(outcome.status == 0)
        let lines = outcome.stdout.split(separator: "\n")
        #expect(lines.count == 8)
        #expect(lines.allSatisfy { $0.hasPrefix("✓ ") })
        #expect(lines.contains("✓ activities published here can be continued (LE privacy on, hci0)"))
    }

    @Test func doctorExplainsWhatIsMissing() async throws {
        var state = ScriptedDaemon.State()
        state.status.adapter = nil
        state.status.accounts = []
        state.status.continuation = ContinuationAvailability(
            state: "unavailable", addressPrivacy: "off", adapter: "hci0", reason: "LE privacy is off on hci0",
            fix: "power the adapter off (bluetoothctl power off), then sudo systemctl restart bluetooth")
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let outcome = try await HandoffCtl.run(["doctor", "--socket", daemon.socketPath])
        #expect(outcome.status == 1)
        #expect(outcome.stdout.contains("✗ no Bluetooth adapter found — fix: "))
        #expect(outcome.stdout.contains("✗ no account — fix: create one with: handoffctl pair\n"))
        #expect(outcome.stdout.contains(
            "✗ activities published here cannot be continued: LE privacy is off on hci0 — fix: power the adapter off (bluetoothctl power off), then sudo systemctl restart bluetooth\n"))

        let down = try await HandoffCtl.run(["doctor", "--json", "--socket", "/nonexistent/handoffd.sock"])
        #expect(down.status == 1)
        let report = try JSONDecoder().decode(JSONValue.self, from: Data(down.stdout.utf8))
        #expect(report.objectValue?["ok"] == false)
        #expect(down.stdout.contains("start it with: systemctl start handoffd"))
    }

    /// A `bluetoothctl` on `$PATH` that prints `output` for `--version`; `output` nil: none on `$PATH`.
    static func bluetoothctlPath(_ output: String?) throws -> (environment: [String: String], directory: URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("btctl-\(UUID().uuidString.prefix(8))")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        if let output {
            let script = directory.appendingPathComponent("bluetoothctl")
            try "#!/bin/sh\n[ \"$1\" = --version ] && echo '\(output)'\n".write(to: script, atomically: true, encoding: .utf8)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: script.path)
        }
        // /bin and /usr/bin for the script's sh, but no other bluetoothctl before ours.
        return (["PATH": directory.path + ":/nonexistent-handoff-path"], directory)
    }

    /// The streams check: bluetoothd's TemporaryTimeout against the installed BlueZ (docs/continuation.md 10.6).
    @Test func doctorWarnsWhenBluetoothdWouldCutStreams() async throws {
        let conf = "/etc/bluetooth/main.conf"
        let fix = "fix: add 'TemporaryTimeout = 120' under [General] in \(conf), then: sudo systemctl restart bluetooth"
        let cases: [(timeout: Int?, version: String?, line: String?)] = [
            (30, "bluetoothctl: 5.66", "✗ continuation streams end about 30 s after the other laptop connects: BlueZ 5.66 removes the other laptop's device, and the link, 30 s (TemporaryTimeout) after connecting — \(fix)"),
            (30, "bluetoothctl: 5.79", "✓ continuation streams: BlueZ 5.79 keeps a connected device"),
            (30, "5.73", "✓ continuation streams: BlueZ 5.73 keeps a connected device"),
            (120, "bluetoothctl: 5.66", "✓ continuation streams can last 120 s at least (TemporaryTimeout = 120 in \(conf))"),
            (0, "bluetoothctl: 5.66", "✓ continuation streams: bluetoothd keeps devices for ever (TemporaryTimeout = 0 in \(conf))"),
            (60, nil, "✗ if bluetoothd is older than 5.73 (bluetoothctl --version did not say), continuation streams end about 60 s after the other laptop connects: such a bluetoothd removes the other laptop's device, and the link, 60 s (TemporaryTimeout) after connecting — \(fix)"),
            (nil, "bluetoothctl: 5.66", nil),
        ]
        for (timeout, version, line) in cases {
            var state = ScriptedDaemon.State()
            state.status.bluetoothdTemporaryTimeout = timeout
            state.status.bluetoothdMainConf = timeout == nil ? nil : conf
            let daemon = try ScriptedDaemon(state)
            defer { daemon.stop() }
            let path = try Self.bluetoothctlPath(version)
            defer { try? FileManager.default.removeItem(at: path.directory) }
            let outcome = try await HandoffCtl.run(["doctor", "--socket", daemon.socketPath], environment: path.environment)
            let last = outcome.stdout.split(separator: "\n").last.map(String.init)
            if let line {
                #expect(last == line, "\(String(describing: timeout)) \(version ?? "none")")
                #expect(outcome.status == (line.hasPrefix("✓") ? 0 : 1))
            } else {
                #expect(last?.hasPrefix("✓ 1 account") == true && outcome.status == 0, "\(outcome.stdout)")
            }
        }
    }

    @Test func watchPrintsEventsUntilTheDaemonGoesAway() async throws {
        var state = ScriptedDaemon.State()
        state.events = [
            try WireFormat.event(.appeared, NearbyEvent(activity: sampleActivity())),
            try WireFormat.event(.lost, NearbyEvent(activity: sampleActivity(type: nil))),
        ]
        state.closeAfterEvents = true
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let json = try await HandoffCtl.run(["watch", "--json", "--type", "org.example.viewing", "--socket", daemon.socketPath])
        #expect(json.status == 1)
        #expect(json.stdout == state.events.map { String(decoding: $0, as: UTF8.self) }.joined())
        #expect(json.stderr.hasPrefix("handoffctl: handoffd closed the connection"))
        let subscribe = try #require(daemon.requests.first { $0.method == .subscribe })
        #expect(try subscribe.params(SubscribeParams.self).types == ["org.example.viewing"])

        let text = try await HandoffCtl.run(["watch", "--socket", daemon.socketPath])
        let lines = text.stdout.split(separator: "\n")
        #expect(lines.count == 2)
        #expect(lines.first?.hasSuffix("  appeared  0a0b0c0d  org.example.viewing  \"Docs\"") == true)
        #expect(lines.last?.hasSuffix("  lost      0a0b0c0d  unknown type (hash deadbeef)  \"Docs\"") == true)
    }
}
