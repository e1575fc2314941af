/// Why an export code was refused. Descriptions never repeat the code.
public enum AccountKeyCodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A character that is neither a symbol nor a separator (space, `-`, tab,
    /// line feed, carriage return); the position counts Unicode scalars from 1.
    case invalidCharacter(Character, position: Int)
    /// Not 56 symbols once the separators are removed.
    case wrongLength(Int)
    /// The check symbols do not match: a typo.
    case checksumMismatch
    /// A code of another version: `AccountKeyCode.retiredVersion` (1) for a
    /// code from an older handoff, anything else for an unknown one.
    case unsupportedVersion(UInt8)
    /// The last secret symbol has non-zero padding bits.
    case nonZeroPadding
    /// The name given for the imported key is invalid.
    case invalidName(AccountKeyError)

    /// What went wrong and what to check.
    public var description: String {
        switch self {
        case .invalidCharacter(let character, let position):
            "character \(String(reflecting: String(character))) at position \(position) is not part of an export code "
                + "(export codes use the digits and the letters other than U, separated by spaces or dashes)"
        case .wrongLength(let count):
            "an export code has \(AccountKeyCode.symbolCount) characters (not counting dashes and spaces), this one has \(count)"
        case .checksumMismatch:
            "the export code has a typo: check each group against the original"
        case .unsupportedVersion(let version) where version == AccountKeyCode.retiredVersion:
            "this is a version \(version) export code, made by an older handoff: its check missed typos, so it is no "
                + "longer accepted; export the account again with this version (codes now start with \(AccountKeyCode.version))"
        case .unsupportedVersion(let version):
            "export code version \(version) is not supported (this build reads version \(AccountKeyCode.version))"
        case .nonZeroPadding:
            "the export code's last secret character is impossible: check it against the original"
        case .invalidName(let error):
            "\(error)"
        }
    }
}
