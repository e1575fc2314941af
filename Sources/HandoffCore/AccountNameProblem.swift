/// What is wrong with a proposed account name.
///
/// Names are shown to the user and are also the key file's name on disk, so
/// they must be a single line and a single path component.
public enum AccountNameProblem: Sendable, Equatable, CustomStringConvertible {
    /// The name is empty.
    case empty
    /// More than `AccountKey.maximumNameLength` Unicode scalars or
    /// `AccountKey.maximumNameBytes` UTF-8 bytes.
    case tooLong
    /// Starts or ends with a White_Space scalar.
    case surroundingWhitespace
    /// Contains a control character (U+0000–U+001F, U+007F–U+009F) or a
    /// line or paragraph separator (U+2028, U+2029).
    case controlCharacter
    /// Contains `/` or `\`.
    case pathSeparator
    /// Starts with `.` (hidden files, `.` and `..`).
    case leadingDot

    /// The rule the name breaks.
    public var description: String {
        switch self {
        case .empty: "it is empty"
        case .tooLong:
            "it is longer than \(AccountKey.maximumNameLength) characters (Unicode code points) "
                + "or \(AccountKey.maximumNameBytes) bytes"
        case .surroundingWhitespace: "it starts or ends with white space"
        case .controlCharacter: "it contains a control character or line break"
        case .pathSeparator: "it contains '/' or '\\'"
        case .leadingDot: "it starts with '.'"
        }
    }
}
