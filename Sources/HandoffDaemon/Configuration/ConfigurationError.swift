/// Why a configuration file could not be used.
///
/// `description` is written for the person editing the file: it names the
/// file, the line when known, the setting (`[socket] mode`) and what is wrong.
public struct ConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What went wrong.
    public enum Problem: Sendable, Equatable {
        /// The file does not exist (only an error when it was named explicitly).
        case notFound
        /// The file exists but could not be read: the system's reason.
        case unreadable(String)
        /// The text is not valid TOML: the parser's message.
        case syntax(String)
        /// A section this version does not know, with the known ones.
        case unknownSection(String, known: [String])
        /// A key this version does not know, with the keys its section has.
        /// A key outside any section has `section == nil` and lists the sections.
        case unknownKey(String, known: [String])
        /// The value has the wrong TOML type.
        case wrongType(expected: String, found: String)
        /// A number outside the allowed range.
        case outOfRange(value: Int, allowed: ClosedRange<Int>)
        /// A value of the right type that means nothing valid.
        case invalidValue(String, reason: String)
    }

    /// The file name (or another label for where the text came from).
    public var source: String
    /// The 1-based line, when known.
    public var line: Int?
    /// The 1-based column, when known.
    public var column: Int?
    /// The section of the offending setting, when there is one.
    public var section: String?
    /// The offending key, when there is one.
    public var key: String?
    /// What is wrong.
    public var problem: Problem

    /// Creates an error; `line` and `column` are 1-based.
    public init(
        source: String,
        line: Int? = nil,
        column: Int? = nil,
        section: String? = nil,
        key: String? = nil,
        problem: Problem
    ) {
        self.source = source
        self.line = line
        self.column = column
        self.section = section
        self.key = key
        self.problem = problem
    }

    /// The setting in the form users see in the file: `[socket] mode`.
    public var setting: String? {
        switch (section, key) {
        case let (section?, key?): "[\(section)] \(key)"
        case let (section?, nil): "[\(section)]"
        case let (nil, key?): key
        case (nil, nil): nil
        }
    }

    public var description: String {
        var location = source
        if let line {
            location += ":\(line)"
            if let column { location += ":\(column)" }
        }
        return "\(location): \(explanation)"
    }

    /// The message without the location prefix.
    public var explanation: String {
        let subject = setting.map { "\($0): " } ?? ""
        switch problem {
        case .notFound:
            return "no such file"
        case .unreadable(let reason):
            return "cannot read the file: \(reason)"
        case .syntax(let message):
            return "invalid TOML: \(message)"
        case .unknownSection(let name, let known):
            return "unknown section [\(name)]; the sections are \(known.map { "[\($0)]" }.joined(separator: ", "))"
        case .unknownKey(let name, let known):
            guard let section else {
                let hint = ConfigurationSchema.sections(containing: name).map { "[\($0)]" }
                let advice = hint.isEmpty
                    ? "settings belong in one of the sections \(known.map { "[\($0)]" }.joined(separator: ", "))"
                    : "did you mean to put it under \(hint.joined(separator: " or "))?"
                return "\"\(name)\" is outside any section; \(advice)"
            }
            return "unknown key \"\(name)\" in [\(section)]; its keys are \(known.joined(separator: ", "))"
        case .wrongType(let expected, let found):
            return "\(subject)expected \(expected), found \(found)"
        case .outOfRange(let value, let allowed):
            return "\(subject)\(value) is out of range; it must be between \(allowed.lowerBound) and \(allowed.upperBound)"
        case .invalidValue(let value, let reason):
            return "\(subject)\(value) \(reason)"
        }
    }
}
