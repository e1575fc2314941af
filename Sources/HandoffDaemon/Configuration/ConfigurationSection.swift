import TOMLKit

/// One section of a parsed file, read key by key with type and range checks.
///
/// Every accessor returns nil when the key is absent, so the caller keeps the default.
struct ConfigurationSection {
    /// The section name, as in `[socket]`.
    let name: String
    /// The section's table, or nil when the file has no such section.
    let table: TOMLTable?
    /// The file name, for errors.
    let source: String
    /// Finds lines for errors.
    let locator: ConfigurationLocator

    /// An error about `key` in this section.
    func error(_ key: String, _ problem: ConfigurationError.Problem) -> ConfigurationError {
        ConfigurationError(
            source: source, line: locator.line(section: name, key: key), section: name, key: key, problem: problem)
    }

    /// Fails on the first key the schema does not list for this section.
    func rejectUnknownKeys() throws(ConfigurationError) {
        guard let table, let known = ConfigurationSchema.keys(of: name) else { return }
        for key in table.keys where !known.contains(key) {
            throw ConfigurationError(
                source: source, line: locator.line(section: name, key: key), section: name,
                problem: .unknownKey(key, known: known))
        }
    }

    /// A string setting.
    func string(_ key: String, meaning: String = "a string") throws(ConfigurationError) -> String? {
        guard let value = table?[key] else { return nil }
        guard let string = value.string else {
            throw error(key, .wrongType(expected: meaning, found: Self.describe(value)))
        }
        return string
    }

    /// A boolean setting.
    func bool(_ key: String) throws(ConfigurationError) -> Bool? {
        guard let value = table?[key] else { return nil }
        guard let bool = value.bool else {
            throw error(key, .wrongType(expected: "true or false", found: Self.describe(value)))
        }
        return bool
    }

    /// An integer setting within `range`.
    func integer(_ key: String, in range: ClosedRange<Int>) throws(ConfigurationError) -> Int? {
        guard let value = table?[key] else { return nil }
        guard let int = value.int else {
            throw error(key, .wrongType(expected: "an integer", found: Self.describe(value)))
        }
        guard range.contains(int) else { throw error(key, .outOfRange(value: int, allowed: range)) }
        return int
    }

    /// "a string (\"x\")", "an integer (5)", … for wrong-type messages.
    static func describe(_ value: TOMLValueConvertible) -> String {
        switch value.type {
        case .string: "a string (\"\(value.string ?? "")\")"
        case .int: "an integer (\(value.int.map(String.init) ?? "?"))"
        case .double: "a floating-point number (\(value.double.map { "\($0)" } ?? "?"))"
        case .bool: "a boolean (\(value.bool.map(String.init) ?? "?"))"
        case .table: "a table"
        case .array: "an array"
        case .date: "a date"
        case .time: "a time"
        case .dateTime: "a date-time"
        }
    }
}
