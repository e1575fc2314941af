/// Why a string is not a valid `ActivityType`.
public enum ActivityTypeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not 3 to 255 bytes long.
    case badLength(Int)
    /// Fewer than two dot-separated labels.
    case notReverseDNS(String)
    /// An empty label, one over 63 characters, or one not starting with a letter or digit.
    case badLabel(String)
    /// A character other than ASCII letters, digits, `-`, `_` and the dots.
    case badCharacter(String)

    /// The rule the string breaks.
    public var description: String {
        switch self {
        case .badLength(let count):
            "an activity type must be 3 to 255 bytes long, not \(count)"
        case .notReverseDNS(let text):
            "activity type \(String(reflecting: text)) is not reverse-DNS (like org.example.app.activity)"
        case .badLabel(let text):
            "activity type \(String(reflecting: text)) has an empty or over-long label, or one not starting with a letter or digit"
        case .badCharacter(let text):
            "activity type \(String(reflecting: text)) may only contain ASCII letters, digits, '-', '_' and '.'"
        }
    }
}
