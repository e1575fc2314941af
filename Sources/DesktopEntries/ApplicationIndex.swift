import Foundation

/// The XDG Base Directory locations the agent reads.
public struct XDGDirectories: Sendable, Hashable {
    /// `$XDG_DATA_HOME`, by default `~/.local/share`.
    public var dataHome: String
    /// `$XDG_DATA_DIRS`, by default `/usr/local/share:/usr/share`, in order of preference.
    public var dataDirs: [String]
    /// `$XDG_RUNTIME_DIR`, when set.
    public var runtimeDir: String?

    public init(dataHome: String, dataDirs: [String], runtimeDir: String?) {
        self.dataHome = dataHome
        self.dataDirs = dataDirs
        self.runtimeDir = runtimeDir
    }

    /// The directories from `environment`, with the spec's defaults for unset or empty
    /// variables. Relative paths are invalid per the spec and ignored.
    public init(environment: [String: String]) {
        let home = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        if let value = environment["XDG_DATA_HOME"], value.hasPrefix("/") {
            dataHome = value
        } else {
            dataHome = home + "/.local/share"
        }
        let dirs = (environment["XDG_DATA_DIRS"] ?? "").split(separator: ":").map(String.init).filter { $0.hasPrefix("/") }
        dataDirs = dirs.isEmpty ? ["/usr/local/share", "/usr/share"] : dirs
        runtimeDir = environment["XDG_RUNTIME_DIR"].flatMap { $0.hasPrefix("/") ? $0 : nil }
    }

    /// The `applications` directories, the most important first.
    public var applicationDirectories: [String] {
        ([dataHome] + dataDirs).map { ($0.hasSuffix("/") ? String($0.dropLast()) : $0) + "/applications" }
    }
}

/// The installed apps that declare activity types (`X-Handoff-ActivityTypes`), read
/// from the desktop entries in the XDG data directories.
public struct ApplicationIndex: Sendable {
    /// The app for each declared type.
    public private(set) var byType: [String: DesktopEntry] = [:]
    /// What was skipped and why, one sentence each, for the log.
    public private(set) var problems: [String] = []

    /// Every declared type, sorted (what the agent declares in `hello`).
    public var types: [String] { byType.keys.sorted() }

    public init() {}

    /// Reads every `*.desktop` file under `directories` (recursively; a file's ID is its
    /// path below the directory with `/` as `-`). For one ID, the file in the earlier
    /// directory wins, even when it is `Hidden=true` (it then masks the others) or its
    /// `TryExec` is missing; malformed files are skipped and do not mask.
    /// For one type, the first app by directory, then by ID, wins.
    public init(directories: [String], path: String? = ProcessInfo.processInfo.environment["PATH"]) {
        var seen = Set<String>()
        for directory in directories {
            for (id, file) in Self.desktopFiles(in: directory) where !seen.contains(id) {
                let entry: DesktopEntry
                do {
                    entry = try DesktopEntry.load(path: file, id: id)
                } catch {
                    problems.append("skipped \(error)")
                    continue
                }
                seen.insert(id)
                if entry.hidden { continue }
                if !entry.invalidActivityTypes.isEmpty {
                    let list = entry.invalidActivityTypes.map { "\"\($0)\"" }.joined(separator: ", ")
                    problems.append("\(file): X-Handoff-ActivityTypes: not valid activity types, ignored: \(list)")
                }
                if entry.activityTypes.isEmpty { continue }
                if let tryExec = entry.tryExec, !Self.isExecutable(tryExec, path: path) {
                    problems.append("\(file): skipped: TryExec \(tryExec) is not an installed program")
                    continue
                }
                for type in entry.activityTypes {
                    if let other = byType[type] {
                        problems.append("\(file): \(type) is already handled by \(other.id), which wins")
                    } else {
                        byType[type] = entry
                    }
                }
            }
        }
    }

    /// `(desktop-file ID, path)` for each `.desktop` file below `directory`, sorted by ID.
    static func desktopFiles(in directory: String) -> [(String, String)] {
        guard let enumerator = FileManager.default.enumerator(atPath: directory) else { return [] }
        var out: [(String, String)] = []
        while let relative = enumerator.nextObject() as? String {
            guard relative.hasSuffix(".desktop") else { continue }
            let full = directory + "/" + relative
            var isDirectory: ObjCBool = false
            guard FileManager.default.fileExists(atPath: full, isDirectory: &isDirectory), !isDirectory.boolValue else {
                continue
            }
            out.append((relative.replacingOccurrences(of: "/", with: "-"), full))
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// `TryExec`: an absolute path that is executable, or a name found on `PATH`.
    static func isExecutable(_ program: String, path: String?) -> Bool {
        if program.contains("/") { return program.hasPrefix("/") && FileManager.default.isExecutableFile(atPath: program) }
        for directory in (path ?? "/usr/local/bin:/usr/bin:/bin").split(separator: ":") {
            if FileManager.default.isExecutableFile(atPath: "\(directory)/\(program)") { return true }
        }
        return false
    }
}
