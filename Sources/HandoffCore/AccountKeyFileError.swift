/// Why an account key file's text could not be parsed.
public enum AccountKeyFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text does not start with a `handoff-account-key:` line (or is empty).
    case notAnAccountKeyFile
    /// A newer (or unknown) format version.
    case unsupportedVersion(String)
    /// A line that is not `field: value`.
    case malformedLine(Int)
    /// A field this version does not know.
    case unknownField(String, line: Int)
    /// A known field out of order or repeated.
    case unexpectedField(String, expected: String, line: Int)
    /// The file ends before this field: usually a truncated file.
    case missingField(String)
    /// Content after the checksum line.
    case trailingContent(line: Int)
    /// The `created` value is not `YYYY-MM-DDTHH:MM:SSZ`.
    case invalidDate(String, line: Int)
    /// The secret is not 64 hex digits (the count found is given).
    case invalidSecret(line: Int, digits: Int)
    /// The checksum is not 8 hex digits.
    case invalidChecksum(line: Int)
    /// The checksum does not match the fields: the file was damaged or edited.
    case checksumMismatch(stored: String, computed: String)
    /// The name is not a valid account name.
    case invalidName(AccountKeyError)

    /// What is wrong, where, and whether the file looks truncated or corrupt.
    public var description: String {
        switch self {
        case .notAnAccountKeyFile:
            "not a handoff account key file (no 'handoff-account-key:' line at the start)"
        case .unsupportedVersion(let version):
            "account key file format version \(version) is not supported "
                + "(this build reads version \(AccountKeyFile.formatVersion)); update handoff"
        case .malformedLine(let line):
            "line \(line) is not 'field: value': the file is corrupt"
        case .unknownField(let name, let line):
            "line \(line) has an unknown field '\(name)': the file is corrupt or from a newer version"
        case .unexpectedField(let name, let expected, let line):
            "line \(line) has field '\(name)' where '\(expected)' was expected: the file is corrupt"
        case .missingField(let name):
            "the '\(name)' line is missing: the file is truncated or corrupt"
        case .trailingContent(let line):
            "line \(line) follows the checksum line: the file is corrupt"
        case .invalidDate(let value, let line):
            "line \(line): 'created' value \(String(reflecting: value)) is not a UTC time like 2025-06-15T15:06:40Z"
        case .invalidSecret(let line, let digits):
            "line \(line): the secret must be 64 hex digits, found \(digits) characters: the file is truncated or corrupt"
        case .invalidChecksum(let line):
            "line \(line): the checksum must be 8 hex digits: the file is corrupt"
        case .checksumMismatch(let stored, let computed):
            "checksum mismatch (file says \(stored), contents give \(computed)): the file is corrupt or was edited; "
                + "restore it from a backup or import the key again"
        case .invalidName(let error):
            "\(error)"
        }
    }
}
