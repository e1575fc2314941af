import Crypto

/// The contents of an account key file: a small versioned text format.
///
/// ```
/// # handoff account key. Keep it secret: mode 0600. Format: docs/beacon-format.md
/// handoff-account-key: 1
/// name: Home
/// created: 2025-06-15T15:06:40Z
/// secret: 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
/// checksum: 1a2b3c4d
/// ```
///
/// The checksum is the first 4 bytes of SHA-256 over the four field lines
/// above it, each exactly as written but ending in one line feed (a CRLF
/// file's carriage returns are not covered). Hex digits are lower case.
/// Comment lines (`#`) and blank lines are ignored. Encoding and parsing are
/// pure; the file I/O is `HandoffStore.AccountKeyStore`.
public struct AccountKeyFile: Sendable, Equatable {
    /// The format version this code writes and reads.
    public static let formatVersion = 1
    /// Files larger than this are refused unread (a valid one is about 250 bytes).
    public static let maximumSize = 4096

    /// The account key.
    public var key: AccountKey
    /// When the key was created, in seconds since the Unix epoch.
    public var created: UInt64

    /// Groups the key and its creation time.
    public init(key: AccountKey, created: UInt64) {
        self.key = key
        self.created = min(created, UTCTimestamp.latest)
    }

    private static let comment = "# handoff account key. Keep it secret: mode 0600. Format: docs/beacon-format.md"

    private enum Field: String, CaseIterable {
        case format = "handoff-account-key"
        case name
        case created
        case secret
        case checksum
    }

    /// The file's text.
    public func encoded() -> String {
        let body = Self.body(
            name: key.name, created: UTCTimestamp.format(created),
            secret: key.withSecretBytes { Hex.encode($0) }
        )
        return Self.comment + "\n" + body + "\(Field.checksum.rawValue): \(Self.checksum(of: body))\n"
    }

    private static func body(name: String, created: String, secret: String) -> String {
        "\(Field.format.rawValue): \(formatVersion)\n\(Field.name.rawValue): \(name)\n"
            + "\(Field.created.rawValue): \(created)\n\(Field.secret.rawValue): \(secret)\n"
    }

    private static func checksum(of body: String) -> String {
        Hex.encode(SHA256.hash(data: Array(body.utf8)).prefix(4))
    }

    /// Parses a file's text (docs/beacon-format.md, section 10).
    ///
    /// Lines end at each U+000A line feed; one U+000D carriage return just
    /// before it is dropped (CRLF files), and the last line may lack its line
    /// feed. A line is ignored when it is empty, consists of spaces and tabs
    /// only, or starts with `#`. Every other line is `field: value`, split at
    /// the first `: ` (U+003A U+0020); the value is the rest of the line,
    /// verbatim. Work is done on Unicode scalars, never on grapheme clusters.
    /// - Throws: `AccountKeyFileError` saying what is wrong and on which line.
    public static func parse(_ text: String) throws(AccountKeyFileError) -> AccountKeyFile {
        var values: [Field: (value: String, line: Int)] = [:]
        var expected = Field.allCases[...]
        var lineNumber = 0
        for rawLine in text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false) {
            lineNumber += 1
            let line = rawLine.last == "\r" ? rawLine.dropLast() : rawLine[...]
            if line.allSatisfy({ $0 == " " || $0 == "\t" }) || line.first == "#" { continue }
            guard let colon = Self.separator(in: line) else {
                throw values.isEmpty ? .notAnAccountKeyFile : .malformedLine(lineNumber)
            }
            let name = String(Substring(line[..<colon]))
            let value = String(Substring(line[line.index(colon, offsetBy: 2)...]))
            guard let field = Field(rawValue: name) else {
                throw values.isEmpty ? .notAnAccountKeyFile : .unknownField(name, line: lineNumber)
            }
            guard let next = expected.first else { throw .trailingContent(line: lineNumber) }
            guard field == next else {
                throw values.isEmpty ? .notAnAccountKeyFile : .unexpectedField(name, expected: next.rawValue, line: lineNumber)
            }
            expected = expected.dropFirst()
            values[field] = (value, lineNumber)
            if field == .format, value != String(formatVersion) { throw .unsupportedVersion(value) }
        }
        if values.isEmpty { throw .notAnAccountKeyFile }
        if let missing = expected.first { throw .missingField(missing.rawValue) }

        let name = values[.name]!, created = values[.created]!, secret = values[.secret]!, checksum = values[.checksum]!
        guard let createdSeconds = UTCTimestamp.parse(created.value) else {
            throw .invalidDate(created.value, line: created.line)
        }
        guard secret.value.utf8.count == 2 * AccountKey.secretByteCount, Hex.isLowercase(secret.value),
            var secretBytes = Hex.decode(secret.value)
        else { throw .invalidSecret(line: secret.line, digits: secret.value.unicodeScalars.count) }
        defer { for index in secretBytes.indices { secretBytes[index] = 0 } }
        guard checksum.value.utf8.count == 8, Hex.isLowercase(checksum.value) else {
            throw .invalidChecksum(line: checksum.line)
        }
        let body = Self.body(name: name.value, created: created.value, secret: secret.value)
        let computed = Self.checksum(of: body)
        guard computed == checksum.value else { throw .checksumMismatch(stored: checksum.value, computed: computed) }
        do {
            return AccountKeyFile(key: try AccountKey(name: name.value, secret: secretBytes), created: createdSeconds)
        } catch {
            throw .invalidName(error)
        }
    }

    /// The index of the first `: ` (U+003A U+0020) in a line, if any.
    private static func separator(in line: Substring.UnicodeScalarView) -> Substring.UnicodeScalarView.Index? {
        var index = line.startIndex
        while index < line.endIndex {
            let next = line.index(after: index)
            if line[index] == ":", next < line.endIndex, line[next] == " " { return index }
            index = next
        }
        return nil
    }
}
