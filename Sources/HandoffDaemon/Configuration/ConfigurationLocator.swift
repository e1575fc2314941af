/// Finds the line a section header or a key is written on, so that errors the
/// TOML parser does not report (unknown keys, bad values) can still point at a line.
///
/// Best effort: it understands `[section]` headers and `key = value` lines,
/// which is how `handoffd.toml` is written. Anything fancier (inline tables,
/// dotted keys) simply yields no line.
struct ConfigurationLocator {
    private var lines: [String: Int] = [:]

    init(text: String) {
        var section = ""
        var number = 0
        for rawLine in text.split(separator: "\n", omittingEmptySubsequences: false) {
            number += 1
            let line = rawLine.trimmingWhitespace()
            if line.isEmpty || line.hasPrefix("#") { continue }
            if line.hasPrefix("[") && !line.hasPrefix("[[") {
                guard let close = line.firstIndex(of: "]") else { continue }
                section = Self.unquote(line[line.index(after: line.startIndex)..<close])
                record(section: section, key: nil, line: number)
            } else if let equals = line.firstIndex(of: "=") {
                record(section: section, key: Self.unquote(line[..<equals]), line: number)
            }
        }
    }

    /// The line of `key` in `section` (or of the header when `key` is nil; a
    /// top-level key has `section == nil`).
    func line(section: String?, key: String?) -> Int? {
        lines[Self.label(section: section ?? "", key: key)]
    }

    private mutating func record(section: String, key: String?, line: Int) {
        let label = Self.label(section: section, key: key)
        if lines[label] == nil { lines[label] = line }
    }

    private static func label(section: String, key: String?) -> String {
        key.map { "\(section)\u{0}\($0)" } ?? section
    }

    private static func unquote(_ text: Substring) -> String {
        var name = text.trimmingWhitespace()
        if name.count >= 2, let first = name.first, first == "\"" || first == "'", name.last == first {
            name = name.dropFirst().dropLast()
        }
        return String(name)
    }
}

private extension StringProtocol {
    /// The text without leading and trailing spaces and tabs.
    func trimmingWhitespace() -> SubSequence {
        let isBlank: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" }
        guard let start = firstIndex(where: { !isBlank($0) }) else { return self[endIndex...] }
        let end = lastIndex(where: { !isBlank($0) })!
        return self[start...end]
    }
}
