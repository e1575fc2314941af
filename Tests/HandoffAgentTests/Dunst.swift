#if canImport(Glibc)
import Glibc
#endif
import DBus
import DBusTestSupport
import Foundation

/// A real notification server for the agent's tests: `dunst` (Debian package `dunst`)
/// drawing on an `Xvfb` display (package `xvfb`) of its own, owning
/// org.freedesktop.Notifications on the test's private session bus.
///
/// What dunst shows is read through its own documented interfaces: the
/// `org.dunstproject.cmd0` D-Bus interface that `dunstctl` uses (`displayedLength`,
/// `NotificationAction`, `NotificationListHistory`), and a rule's `script`, which dunst
/// runs for every notification it matches with the notification's fields in
/// `DUNST_*` environment variables (dunst(5), SCRIPTING). The rule matches the agent's
/// `category` hint, so a notification without it is never recorded.
///
/// Both programs are required: when one is missing the test fails (`make deps`
/// installs them), it never skips.
final class DunstSession: Sendable {
    static let xvfb = "/usr/bin/Xvfb"
    static let dunst = "/usr/bin/dunst"
    static let cmd = "org.dunstproject.cmd0"

    let display: String
    let directory: String
    private let xvfbProcess: TestProcess
    private let dunstProcess: TestProcess
    private let observer: DBusConnection

    /// One notification as dunst's rule script saw it.
    struct Shown: Sendable, Equatable {
        var id: UInt32
        var appName: String
        var summary: String
        var body: String
        var desktopEntry: String
        var category: String
        var timeout: String
    }

    /// Starts Xvfb and dunst in `directory` on `bus`, and waits until dunst owns its name.
    init(bus: TestBus, directory: String, observer: DBusConnection) async throws {
        self.directory = directory
        self.observer = observer
        for tool in [Self.xvfb, Self.dunst] where !FileManager.default.isExecutableFile(atPath: tool) {
            throw TestFailure("\(tool) is missing: `make deps` installs the xvfb and dunst packages")
        }
        try FileManager.default.createDirectory(atPath: directory + "/shown", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: directory + "/run", withIntermediateDirectories: true)
        chmod(directory + "/run", 0o700)

        // Xvfb picks a free display itself and writes its number once it accepts clients.
        let displayFile = directory + "/display"
        let xlog = open(directory + "/xvfb.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let xout = open(displayFile, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            close(xlog)
            close(xout)
        }
        xvfbProcess = try TestProcess(
            Self.xvfb, ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1024x768x24"], stdout: xout, stderr: xlog)
        var number = ""
        let deadline = ContinuousClock.now + .seconds(15)
        while true {
            let text = (try? String(contentsOfFile: displayFile, encoding: .utf8)) ?? ""
            if text.hasSuffix("\n") {
                number = text.trimmingCharacters(in: .whitespacesAndNewlines)
                break
            }
            guard xvfbProcess.isRunning, ContinuousClock.now < deadline else {
                xvfbProcess.kill()
                let log = (try? String(contentsOfFile: directory + "/xvfb.log", encoding: .utf8)) ?? ""
                throw TestFailure("Xvfb did not report a display; its log:\n\(log)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        display = ":" + number

        let script = directory + "/record.sh"
        try """
        #!/bin/sh
        # Run by dunst for each notification of the agent's category (dunst(5), SCRIPTING).
        out='\(directory)/shown/'"$DUNST_ID"
        printf '%s\\0' "$DUNST_ID" "$DUNST_APP_NAME" "$DUNST_SUMMARY" "$DUNST_BODY" \\
            "$DUNST_DESKTOP_ENTRY" "$DUNST_CATEGORY" "$DUNST_TIMEOUT" > "$out.tmp"
        mv "$out.tmp" "$out"
        """.write(toFile: script, atomically: true, encoding: .utf8)
        chmod(script, 0o755)
        let menu = directory + "/menu.sh"
        try """
        #!/bin/sh
        # dunst's context menu (its dmenu setting): the choices come on standard input, one a line,
        # and the chosen one goes to standard output. This one chooses the line of the action
        # key named in menu.choice, and keeps the choices in menu.in.
        cat > '\(directory)/menu.tmp'
        grep -m1 -F ",$(cat '\(directory)/menu.choice')]" '\(directory)/menu.tmp'
        mv '\(directory)/menu.tmp' '\(directory)/menu.in'
        """.write(toFile: menu, atomically: true, encoding: .utf8)
        chmod(menu, 0o755)
        let config = directory + "/dunstrc"
        try """
        [global]
            history_length = 20
            font = Monospace 8
            dmenu = \(menu)

        [handoff-record]
            category = "x-handoff.activity"
            script = \(script)
        """.write(toFile: config, atomically: true, encoding: .utf8)

        var environment = bus.bus.environment
        environment.removeValue(forKey: "WAYLAND_DISPLAY")
        environment["DISPLAY"] = display
        environment["HOME"] = directory
        environment["XDG_CONFIG_HOME"] = directory + "/config"
        environment["XDG_RUNTIME_DIR"] = directory + "/run"
        let dlog = open(directory + "/dunst.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(dlog) }
        do {
            dunstProcess = try TestProcess(
                Self.dunst, ["-config", config], environment: environment, stdout: dlog, stderr: dlog)
        } catch {
            xvfbProcess.kill()
            throw error
        }
        let peer = PeerProcess(process: dunstProcess, logPath: directory + "/dunst.log")
        do {
            try await peer.waitForName("org.freedesktop.Notifications", on: observer)
        } catch {
            stop()
            throw error
        }
    }

    func stop() {
        dunstProcess.kill()
        xvfbProcess.kill()
    }

    var log: String { (try? String(contentsOfFile: directory + "/dunst.log", encoding: .utf8)) ?? "" }

    // MARK: dunst's interface (what dunstctl calls)

    private func property(_ name: String) async throws -> DBusValue {
        let reply = try await observer.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.freedesktop.DBus.Properties", member: "Get", [.string(Self.cmd), .string(name)])
        guard let value = reply.body.first else { throw TestFailure("Properties.Get \(name): an empty reply") }
        return value
    }

    /// How many notifications dunst has on screen (`dunstctl count displayed`).
    func displayed() async throws -> Int {
        Int(try await property("displayedLength").integer ?? -1)
    }

    /// Does the default action of the notification at `position` on screen, as
    /// `dunstctl action POSITION` does (a click on it does the same).
    func action(at position: UInt32 = 0) async throws {
        try await observer.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: Self.cmd, member: "NotificationAction", [.uint32(position)])
    }

    /// Opens dunst's context menu (`dunstctl context`), which lists the actions of the
    /// notifications on screen as dunst shows them, chooses the action `key` there, and
    /// returns the menu's lines (`#Label (summary) [id,key]`).
    func contextMenu(choosing key: String) async throws -> [String] {
        let file = directory + "/menu.in"
        try? FileManager.default.removeItem(atPath: file)
        try key.write(toFile: directory + "/menu.choice", atomically: true, encoding: .utf8)
        try await observer.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: Self.cmd, member: "ContextMenuCall")
        let deadline = ContinuousClock.now + .seconds(15)
        while !FileManager.default.fileExists(atPath: file) {
            guard ContinuousClock.now < deadline else { throw TestFailure("dunst did not open its context menu; its log:\n\(log)") }
            try await Task.sleep(for: .milliseconds(20))
        }
        return try String(contentsOfFile: file, encoding: .utf8).split(separator: "\n").map(String.init)
    }

    /// The summaries of the notifications in dunst's history (closed ones), newest first
    /// (`dunstctl history`).
    func historySummaries() async throws -> [String] {
        let reply = try await observer.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: Self.cmd, member: "NotificationListHistory")
        let list = reply.body.first?.arrayElements ?? []
        return list.compactMap { $0.vardict?["summary"]?.string }
    }

    /// The notifications dunst's rule script recorded, in the order of their ids.
    func shown() -> [Shown] {
        let files = (try? FileManager.default.contentsOfDirectory(atPath: directory + "/shown")) ?? []
        return files.compactMap { UInt32($0) }.sorted().compactMap { id in
            guard let data = FileManager.default.contents(atPath: directory + "/shown/\(id)") else { return nil }
            let fields = data.split(separator: 0, omittingEmptySubsequences: false).map {
                String(decoding: $0, as: UTF8.self)
            }
            guard fields.count >= 7 else { return nil }
            return Shown(
                id: UInt32(fields[0]) ?? 0, appName: fields[1], summary: fields[2], body: fields[3],
                desktopEntry: fields[4], category: fields[5], timeout: fields[6])
        }
    }
}
