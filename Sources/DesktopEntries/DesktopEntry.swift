import Foundation

/// One desktop entry file (freedesktop Desktop Entry Specification 1.5), as far as the
/// agent needs it: its `[Desktop Entry]` group, with the keys' values unescaped.
public struct DesktopEntry: Sendable, Hashable {
    /// The desktop-file ID: the path below `applications/`, with `/` turned into `-`
    /// (`org.example.Reader.desktop`).
    public var id: String
    /// Where the file is (`%k`).
    public var path: String
    /// `Name` (unlocalised).
    public var name: String
    /// `Icon`: a themed icon name or an absolute path; nil when absent or empty.
    public var icon: String?
    /// `Exec`, split into arguments by the spec's quoting rules; nil when absent.
    public var exec: ExecLine?
    /// `TryExec`, when given.
    public var tryExec: String?
    /// `DBusActivatable=true`: launch by D-Bus activation (`org.freedesktop.Application`).
    public var dbusActivatable: Bool
    /// `Hidden=true`: the entry is deleted, and masks entries of the same ID further down.
    public var hidden: Bool
    /// `X-Handoff-ActivityTypes`: the activity types the app continues, valid ones only.
    public var activityTypes: [String]
    /// Types listed in `X-Handoff-ActivityTypes` that are not valid activity types.
    public var invalidActivityTypes: [String]

    /// The application's D-Bus name for activation: the ID without `.desktop`.
    public var busName: String { id.hasSuffix(".desktop") ? String(id.dropLast(8)) : id }

    /// The object path `org.freedesktop.Application` lives at: the bus name with
    /// `.` turned into `/` and `-` into `_`, after a leading `/`.
    public var objectPath: String {
        "/" + busName.replacingOccurrences(of: ".", with: "/").replacingOccurrences(of: "-", with: "_")
    }
}

/// Why a desktop entry file cannot be used.
public struct DesktopEntryError: Error, Sendable, Hashable, CustomStringConvertible {
    public var path: String
    public var line: Int?
    public var reason: String

    public init(path: String, line: Int? = nil, reason: String) {
        self.path = path
        self.line = line
        self.reason = reason
    }

    public var description: String {
        "\(path)\(line.map { ":\($0)" } ?? ""): \(reason)"
    }
}

extension DesktopEntry {
    /// Reads the file at `path`, whose desktop-file ID is `id`.
    /// - Throws: `DesktopEntryError` saying what is malformed and where.
    public static func load(path: String, id: String) throws -> DesktopEntry {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw DesktopEntryError(path: path, reason: "cannot be read")
        }
        guard let text = String(data: data, encoding: .utf8) else {
            throw DesktopEntryError(path: path, reason: "is not UTF-8")
        }
        return try parse(text, path: path, id: id)
    }

    /// Parses the text of a desktop entry file.
    public static func parse(_ text: String, path: String, id: String) throws -> DesktopEntry {
        var group: String?
        var sawGroup = false
        var keys: [String: (value: String, line: Int)] = [:]
        var lineNumber = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            var line = Substring(rawLine)
            if line.last == "\r" { line.removeLast() }
            let trimmed = line.drop { $0 == " " || $0 == "\t" }
            if trimmed.isEmpty || trimmed.first == "#" { continue }
            if trimmed.first == "[" {
                guard trimmed.last == "]", trimmed.count > 2 else {
                    throw DesktopEntryError(path: path, line: lineNumber, reason: "malformed group header")
                }
                let name = String(trimmed.dropFirst().dropLast())
                if !sawGroup && name != "Desktop Entry" {
                    throw DesktopEntryError(path: path, line: lineNumber, reason: "the first group must be [Desktop Entry]")
                }
                if sawGroup && name == "Desktop Entry" {
                    throw DesktopEntryError(path: path, line: lineNumber, reason: "a second [Desktop Entry] group")
                }
                sawGroup = true
                group = name
                continue
            }
            guard let equals = trimmed.firstIndex(of: "=") else {
                throw DesktopEntryError(path: path, line: lineNumber, reason: "neither a key=value line, a group nor a comment")
            }
            guard sawGroup else {
                throw DesktopEntryError(path: path, line: lineNumber, reason: "a key before the [Desktop Entry] group")
            }
            let key = String(trimmed[..<equals]).trimmingCharacters(in: .whitespaces)
            var value = trimmed[trimmed.index(after: equals)...]
            value = value.drop { $0 == " " || $0 == "\t" }
            guard Self.isValidKey(key) else {
                throw DesktopEntryError(path: path, line: lineNumber, reason: "invalid key name \"\(key)\"")
            }
            guard group == "Desktop Entry" else { continue }
            if keys[key] != nil {
                throw DesktopEntryError(path: path, line: lineNumber, reason: "the key \(key) appears twice")
            }
            keys[key] = (String(value), lineNumber)
        }
        guard sawGroup else { throw DesktopEntryError(path: path, reason: "no [Desktop Entry] group") }

        func string(_ key: String) throws -> String? {
            guard let found = keys[key] else { return nil }
            do { return try unescape(found.value) } catch {
                throw DesktopEntryError(path: path, line: found.line, reason: "\(key): \(error)")
            }
        }
        func boolean(_ key: String) throws -> Bool {
            guard let found = keys[key] else { return false }
            switch found.value {
            case "true": return true
            case "false": return false
            default:
                throw DesktopEntryError(
                    path: path, line: found.line, reason: "\(key) must be true or false, not \"\(found.value)\"")
            }
        }

        guard let type = try string("Type") else { throw DesktopEntryError(path: path, reason: "no Type key") }
        let hidden = try boolean("Hidden")
        guard let name = try string("Name"), !name.isEmpty else {
            if hidden { return DesktopEntry.masked(id: id, path: path) }
            throw DesktopEntryError(path: path, reason: "no Name key")
        }
        let dbusActivatable = try boolean("DBusActivatable")
        var exec: ExecLine?
        if let raw = try string("Exec") {
            do {
                exec = try ExecLine(raw)
            } catch {
                throw DesktopEntryError(path: path, line: keys["Exec"]?.line, reason: "Exec: \(error)")
            }
        }
        if type == "Application" && exec == nil && !dbusActivatable && !hidden {
            throw DesktopEntryError(path: path, reason: "an Application needs Exec (or DBusActivatable=true)")
        }
        var types: [String] = []
        var invalid: [String] = []
        if let found = keys["X-Handoff-ActivityTypes"] {
            let list: [String]
            do { list = try splitList(found.value) } catch {
                throw DesktopEntryError(path: path, line: found.line, reason: "X-Handoff-ActivityTypes: \(error)")
            }
            for item in list where !item.isEmpty {
                if ActivityTypeName.isValid(item) { if !types.contains(item) { types.append(item) } } else { invalid.append(item) }
            }
        }
        let icon = try string("Icon").flatMap { $0.isEmpty ? nil : $0 }
        return DesktopEntry(
            id: id, path: path, name: name, icon: icon, exec: exec, tryExec: try string("TryExec"),
            dbusActivatable: dbusActivatable, hidden: hidden, activityTypes: type == "Application" ? types : [],
            invalidActivityTypes: invalid)
    }

    static func masked(id: String, path: String) -> DesktopEntry {
        DesktopEntry(
            id: id, path: path, name: "", icon: nil, exec: nil, tryExec: nil, dbusActivatable: false, hidden: true,
            activityTypes: [], invalidActivityTypes: [])
    }

    /// Key names: `A-Za-z0-9-`, optionally followed by a locale in brackets.
    static func isValidKey(_ key: String) -> Bool {
        var base = Substring(key)
        if let bracket = key.firstIndex(of: "[") {
            guard key.last == "]" else { return false }
            base = key[..<bracket]
        }
        return !base.isEmpty && base.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
    }

    /// The string escapes: `\s`, `\n`, `\t`, `\r`, `\\`.
    static func unescape(_ raw: String) throws -> String {
        var out = ""
        var iterator = raw.makeIterator()
        while let character = iterator.next() {
            guard character == "\\" else { out.append(character); continue }
            guard let next = iterator.next() else { throw ExecLineError("a lone backslash at the end") }
            switch next {
            case "s": out.append(" ")
            case "n": out.append("\n")
            case "t": out.append("\t")
            case "r": out.append("\r")
            case "\\": out.append("\\")
            case ";": out.append("\\;")  // kept for list splitting
            default: throw ExecLineError("unknown escape \\\(next)")
            }
        }
        return out
    }

    /// A `;`-separated list (the last `;` optional), with `\;` for a semicolon inside an item.
    static func splitList(_ raw: String) throws -> [String] {
        let value = try unescape(raw)
        var items: [String] = []
        var current = ""
        var iterator = value.makeIterator()
        while let character = iterator.next() {
            if character == "\\" {
                if let next = iterator.next() { current.append(next == ";" ? ";" : next) }
            } else if character == ";" {
                items.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        if !current.isEmpty { items.append(current) }
        return items
    }
}

/// The rule for activity types (docs/protocol.md, `publish`).
public enum ActivityTypeName {
    public static func isValid(_ type: String) -> Bool {
        let bytes = type.utf8.count
        guard (3...255).contains(bytes) else { return false }
        let labels = type.split(separator: ".", omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return false }
        for label in labels {
            guard (1...63).contains(label.count), let first = label.first, first.isASCII, first.isLetter || first.isNumber
            else { return false }
            guard label.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-" || $0 == "_") }) else { return false }
        }
        return true
    }
}
