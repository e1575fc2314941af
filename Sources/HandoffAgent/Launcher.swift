import DBus
import DesktopEntries
import Foundation
import HandoffKit

/// Starts programs without a shell: an argument array for `posix_spawn` (through
/// Foundation's `Process`), so no character of an activity's fields is ever interpreted.
public struct Launcher: Sendable {
    /// The environment the programs get (plus what each launch adds).
    public var environment: [String: String]

    public init(environment: [String: String]) {
        self.environment = environment
    }

    /// A started program, or why it could not start.
    public struct LaunchError: Error, Sendable, CustomStringConvertible {
        public var description: String
        public init(_ description: String) { self.description = description }
    }

    /// Starts `arguments[0]` (a path, or a name looked up on `PATH`) with the rest as its
    /// arguments; does not wait for it to exit (it is reaped when it does).
    @discardableResult
    public func spawn(_ arguments: [String], adding extra: [String: String] = [:]) throws -> Int32 {
        guard let program = arguments.first, !program.isEmpty else { throw LaunchError("an empty command line") }
        guard let executable = resolve(program) else { throw LaunchError("\(program): no such program on PATH") }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = Array(arguments.dropFirst())
        process.environment = environment.merging(extra) { $1 }
        process.standardInput = FileHandle.nullDevice
        do {
            try process.run()
        } catch {
            throw LaunchError("\(executable): \(error.localizedDescription)")
        }
        return process.processIdentifier
    }

    /// The absolute path of `program`: itself when it has a slash, else the first
    /// executable of that name on `PATH`.
    public func resolve(_ program: String) -> String? {
        if program.contains("/") {
            return FileManager.default.isExecutableFile(atPath: program) ? program : nil
        }
        let path = environment["PATH"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where directory.hasPrefix("/") {
            let candidate = "\(directory)/\(program)"
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// The command lines for a web page, as xdg-open runs them: each command of
    /// `$BROWSER` (a `:`-separated list; `%s` stands for the URL, else it is added at
    /// the end), then `xdg-open URL`. The URL is always one argument.
    public func browserCommands(for url: String) -> [[String]] {
        var commands: [[String]] = []
        if let browser = environment["BROWSER"], !browser.isEmpty {
            for command in browser.split(separator: ":") {
                var words = command.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
                guard !words.isEmpty else { continue }
                if words.contains(where: { $0.contains("%s") }) {
                    words = words.map { $0 == "%s" ? url : $0.replacingOccurrences(of: "%s", with: url) }
                } else {
                    words.append(url)
                }
                commands.append(words)
            }
        }
        commands.append(["xdg-open", url])
        return commands
    }

    /// Opens an http or https URL in the browser (`browserCommands`): the first command
    /// whose program exists is started.
    /// - Throws: `LaunchError` for another scheme, or when no browser can be started.
    public func openWebpage(_ url: String) throws {
        guard let parsed = URL(string: url), let scheme = parsed.scheme?.lowercased(), scheme == "http" || scheme == "https",
            parsed.host?.isEmpty == false
        else { throw LaunchError("refusing to open \(url): only http and https pages are opened") }
        var failures: [String] = []
        for command in browserCommands(for: url) {
            do {
                try spawn(command)
                return
            } catch {
                failures.append("\(error)")
            }
        }
        throw LaunchError("no browser could be started (\(failures.joined(separator: "; ")))")
    }

    /// Launches `entry` to continue with the hand-over file at `file`: by D-Bus activation
    /// (`org.freedesktop.Application.Open` with the file's URI) when it is
    /// `DBusActivatable`, else by its `Exec` line.
    /// - Returns: what was done, for the log.
    public func launch(_ entry: DesktopEntry, handOver file: String, session: DBusConnection?) async throws -> String {
        let uri = URL(fileURLWithPath: file).absoluteString
        if entry.dbusActivatable, let session {
            do {
                try await session.call(
                    destination: entry.busName, path: try DBusObjectPath(entry.objectPath),
                    interface: "org.freedesktop.Application", member: "Open",
                    [.strings([uri]), .vardict([:])], timeout: .seconds(25))
                return "D-Bus activation of \(entry.busName): Open(\(uri))"
            } catch where entry.exec != nil {
                // The spec lets Exec stand in for activation.
            }
        }
        guard let exec = entry.exec else { throw LaunchError("\(entry.id) has no Exec line and could not be activated") }
        let arguments = exec.expand(
            .init(files: [file], urls: [uri], icon: entry.icon, name: entry.name, desktopFile: entry.path))
        let pid = try spawn(arguments, adding: [HandedOverActivity.environmentVariable: file])
        return "started \(arguments[0]) (pid \(pid)) for \(entry.id)"
    }
}

