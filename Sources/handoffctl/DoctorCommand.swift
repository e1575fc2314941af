import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl doctor`
struct DoctorCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "doctor",
        abstract: "Check that handoff can work here, and say how to fix what is missing.",
        discussion: """
            Runs these checks in order and prints one line for each: "✓ …" when it passes, \
            "✗ … — fix: …" when it does not. A check that needs the daemon is skipped when the \
            daemon cannot be reached.

              socket       the socket exists and accepts this user's connection
              protocol     the daemon answers hello with a version this handoffctl speaks
              adapter      the daemon uses a Bluetooth adapter
              scanning     the radio listens for your other devices' beacons
              advertising  whether it advertises this laptop's activity (information only)
              continuation your other devices can continue activities published here: LE
                           address privacy is on in the kernel for the adapter, so the
                           connectable advertisement never shows its public address
              radio        no radio error is pending
              accounts     you have at least one account
              streams      continuation streams can outlast 30 s: bluetoothd is 5.73 or
                           later (bluetoothctl --version), or its main.conf keeps devices
                           (TemporaryTimeout) at least 120 s; BlueZ before 5.73 removes the
                           other laptop's device, and the link, that long after connecting
                           (skipped when the daemon cannot read bluetoothd's main.conf)

            Exits with status 0 when every check passes and 1 otherwise. With --json, prints \
            {"checks":[{"fix":…,"message":…,"name":…,"ok":…}],"ok":…} instead.

            EXAMPLES
              handoffctl doctor
              handoffctl doctor --json | jq '.checks[] | select(.ok | not)'
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the checks as one JSON object.")
    var json = false

    func run() async throws {
        let checks = await Self.diagnose(socketPath: connection.socketPath)
        let report = Report(checks: checks, ok: checks.allSatisfy(\.ok))
        if json {
            try JSONOutput.printValue(report)
        } else {
            for check in checks { Terminal.printLine(check.line) }
        }
        if !report.ok { throw ExitCode.failure }
    }

    /// Everything `doctor` prints, for `--json`.
    struct Report: Encodable {
        var checks: [Check]
        var ok: Bool
    }

    /// One line of the checklist.
    struct Check: Encodable {
        var name: String
        var ok: Bool
        var message: String
        var fix: String?

        static func pass(_ name: String, _ message: String) -> Check {
            Check(name: name, ok: true, message: message, fix: nil)
        }

        static func fail(_ name: String, _ message: String, fix: String) -> Check {
            Check(name: name, ok: false, message: message, fix: fix)
        }

        var line: String { ok ? "✓ \(message)" : "✗ \(message) — fix: \(fix ?? "")" }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(name, forKey: .name)
            try container.encode(ok, forKey: .ok)
            try container.encode(message, forKey: .message)
            try container.encode(fix, forKey: .fix)  // null when it passes
        }

        private enum CodingKeys: String, CodingKey { case name, ok, message, fix }
    }

    static let startDaemon = "start it with: systemctl start handoffd"
    static let joinGroup = "add yourself to group handoff (sudo usermod -aG handoff $USER), then log in again"
    static let readLog = "see: journalctl -u handoffd; systemctl status bluetooth"

    /// Runs the checks, stopping at the first one the others depend on.
    static func diagnose(socketPath path: String) async -> [Check] {
        var checks: [Check] = []
        let connection: HandoffConnection
        do {
            connection = try await HandoffConnection.connect(socketPath: path)
            checks.append(.pass("socket", "socket \(path) accepts connections"))
        } catch HandoffClientError.daemonNotRunning {
            let why = FileManager.default.fileExists(atPath: path) ? "nothing listens on \(path)" : "no socket at \(path)"
            return [.fail("socket", "handoffd is not running (\(why))", fix: startDaemon)]
        } catch HandoffClientError.permissionDenied {
            return [.fail("socket", "permission denied on \(path)", fix: joinGroup)]
        } catch {
            return [.fail("socket", "\(error)", fix: "check that \(path) is handoffd's socket (--socket, $HANDOFF_SOCKET)")]
        }
        defer { Task { await connection.close() } }

        do {
            let hello = try await connection.hello(app: "handoffctl doctor")
            checks.append(.pass("protocol", "\(hello.daemon) answers, speaking protocol version \(hello.version)"))
        } catch HandoffClientError.protocolError(let error) where error.code == .unsupportedVersion {
            checks.append(
                .fail(
                    "protocol", "handoffd speaks no protocol version this handoffctl knows (\(ProtocolVersion.supported))",
                    fix: "install handoffd and handoffctl from the same release"))
            return checks
        } catch {
            checks.append(.fail("protocol", "handoffd does not answer hello: \(error)", fix: readLog))
            return checks
        }

        let status: StatusResult
        do {
            status = try await connection.status()
        } catch {
            checks.append(.fail("status", "handoffd does not answer status: \(error)", fix: readLog))
            return checks
        }
        checks += evaluate(status)
        if let check = streamsCheck(status, bluez: status.bluetoothdTemporaryTimeout == nil ? nil : await BlueZVersion.installed()) {
            checks.append(check)
        }
        return checks
    }

    /// A `TemporaryTimeout` this long gives a continuation stream two minutes on BlueZ before 5.73.
    static let recommendedTemporaryTimeout = 120

    /// Whether continuation streams outlast bluetoothd's `TemporaryTimeout` (docs/continuation.md 10.6, "BlueZ
    /// before 5.73 and long streams"); nil when the daemon does not say what bluetoothd's main.conf sets.
    /// `bluez`: the installed BlueZ's version, nil when unknown.
    static func streamsCheck(_ status: StatusResult, bluez: BlueZVersion?) -> Check? {
        guard let seconds = status.bluetoothdTemporaryTimeout else { return nil }
        let conf = status.bluetoothdMainConf ?? "/etc/bluetooth/main.conf"
        if seconds == 0 {
            return .pass("streams", "continuation streams: bluetoothd keeps devices for ever (TemporaryTimeout = 0 in \(conf))")
        }
        if seconds >= recommendedTemporaryTimeout {
            return .pass("streams", "continuation streams can last \(seconds) s at least (TemporaryTimeout = \(seconds) in \(conf))")
        }
        if let bluez, bluez >= BlueZVersion(major: 5, minor: 73) {
            return .pass("streams", "continuation streams: BlueZ \(bluez) keeps a connected device")
        }
        let fix = "add 'TemporaryTimeout = \(recommendedTemporaryTimeout)' under [General] in \(conf), then: sudo systemctl restart bluetooth"
        let cause = "removes the other laptop's device, and the link, \(seconds) s (TemporaryTimeout) after connecting"
        guard let bluez else {
            return .fail(
                "streams",
                "if bluetoothd is older than 5.73 (bluetoothctl --version did not say), continuation streams end about \(seconds) s after the other laptop connects: such a bluetoothd \(cause)",
                fix: fix)
        }
        return .fail(
            "streams", "continuation streams end about \(seconds) s after the other laptop connects: BlueZ \(bluez) \(cause)",
            fix: fix)
    }

    /// Whether activities published here can be continued; nil from a daemon that does not say.
    static func continuationCheck(_ availability: ContinuationAvailability?) -> Check? {
        guard let availability else { return nil }
        let reason = Terminal.singleLine(availability.reason, limit: 300)
        if availability.isAvailable {
            return .pass("continuation", "activities published here can be continued (\(reason))")
        }
        if availability.state == ContinuationAvailability.unavailable {
            return .fail(
                "continuation", "activities published here cannot be continued: \(reason)",
                fix: availability.fix ?? readLog)
        }
        return .fail("continuation", "cannot tell whether activities here can be continued: \(reason)", fix: readLog)
    }

    /// The checks that read the daemon's status.
    static func evaluate(_ status: StatusResult) -> [Check] {
        var checks: [Check] = []
        if let adapter = status.adapter {
            let address = status.adapterAddress.map { " (\($0))" } ?? ""
            checks.append(.pass("adapter", "Bluetooth adapter \(adapter)\(address) in use"))
        } else {
            checks.append(
                .fail(
                    "adapter", "no Bluetooth adapter found",
                    fix: "plug one in or switch it on (rfkill unblock bluetooth; systemctl start bluetooth)"))
        }
        if status.scanning {
            checks.append(.pass("scanning", "scanning for your other devices"))
        } else {
            checks.append(.fail("scanning", "not scanning (radio: \(status.radio))", fix: readLog))
        }
        checks.append(
            .pass(
                "advertising",
                status.advertising ? "advertising the current activity" : "not advertising (no current activity)"))
        if let check = continuationCheck(status.continuation) { checks.append(check) }
        if let error = status.lastError {
            checks.append(.fail("radio", "last radio error: \(Terminal.singleLine(error, limit: 200))", fix: readLog))
        } else {
            checks.append(.pass("radio", "no radio errors"))
        }
        if status.accounts.isEmpty {
            checks.append(.fail("accounts", "no account", fix: "create one with: handoffctl pair"))
        } else {
            let count = status.accounts.count == 1 ? "1 account" : "\(status.accounts.count) accounts"
            checks.append(.pass("accounts", "\(count): \(status.accounts.joined(separator: ", "))"))
        }
        return checks
    }
}
