/// Why an export code was refused.
public enum AccountKeyCodeError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A character that is not base32, a space or a dash (1-based position).
    case invalidCharacter(Character, position: Int)
    /// Not 56 symbols once spaces and dashes are removed.
    case wrongLength(Int)
    /// The check symbols do not match: a typo.
    case checksumMismatch
    /// A code of another version.
    case unsupportedVersion(UInt8)
    /// The last secret symbol has non-zero padding bits.
    case nonZeroPadding
    /// The name given for the imported key is invalid.
    case invalidName(AccountKeyError)

    /// What went wrong and what to check.
    public var description: String {
        switch self {
        case .invalidCharacter(let character, let position):
            "character \(String(reflecting: String(character))) at position \(position) is not part of an export code"
        case .wrongLength(let count):
            "an export code has \(AccountKeyCode.symbolCount) characters (not counting dashes and spaces), this one has \(count)"
        case .checksumMismatch:
            "the export code has a typo: check each group against the original"
        case .unsupportedVersion(let version):
            "export code version \(version) is not supported (this build reads version \(AccountKeyCode.version))"
        case .nonZeroPadding:
            "the export code's last secret character is impossible: check it against the original"
        case .invalidName(let error):
            "\(error)"
        }
    }
}
