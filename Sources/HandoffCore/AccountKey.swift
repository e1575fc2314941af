import Crypto

/// An account: a 256-bit random secret shared by the user's devices, and a
/// human name for local display.
///
/// Devices that hold the same account key recognise each other's beacons.
/// The secret never appears in `description`, `debugDescription` or a
/// reflection `Mirror`: they show only the name and the `AccountID`.
public struct AccountKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// Length of the secret in bytes.
    public static let secretByteCount = 32
    /// Longest accepted name, in Unicode scalars (code points), not grapheme clusters.
    public static let maximumNameLength = 64
    /// Longest accepted name, in UTF-8 bytes.
    public static let maximumNameBytes = 200

    /// The name shown to the user; also the key file's name on disk.
    public let name: String
    /// The secret. Internal: only the key file and export code encoders read it.
    let secret: SecretBytes
    /// The derived sub-keys.
    public let schedule: AccountKeySchedule

    /// A local identifier that reveals nothing about the secret.
    public var id: AccountID { schedule.accountID }

    /// Creates an account key from an existing secret.
    /// - Throws: `AccountKeyError` if the name is invalid or the secret is not 32 bytes.
    public init(name: String, secret: some Collection<UInt8>) throws(AccountKeyError) {
        try Self.validate(name: name)
        guard secret.count == Self.secretByteCount else { throw .wrongSecretLength(secret.count) }
        self.name = name
        self.secret = SecretBytes(secret)
        schedule = self.secret.withUnsafeBytes { AccountKeySchedule(secret: SymmetricKey(data: $0)) }
    }

    /// Generates a new account key from `generator`, which must be a
    /// cryptographically secure generator outside of tests.
    public static func generate(
        name: String, using generator: inout some RandomNumberGenerator
    ) throws(AccountKeyError) -> AccountKey {
        var secret = [UInt8](repeating: 0, count: secretByteCount)
        for index in secret.indices { secret[index] = UInt8.random(in: .min ... .max, using: &generator) }
        defer { for index in secret.indices { secret[index] = 0 } }
        return try AccountKey(name: name, secret: secret)
    }

    /// Generates a new account key from the system's secure random source.
    public static func generate(name: String) throws(AccountKeyError) -> AccountKey {
        var generator = SystemRandomNumberGenerator()
        return try generate(name: name, using: &generator)
    }

    /// The same secret under another name.
    public func renamed(to newName: String) throws(AccountKeyError) -> AccountKey {
        try withSecretBytes { bytes throws(AccountKeyError) in try AccountKey(name: newName, secret: bytes) }
    }

    /// Calls `body` with the raw secret. Internal: the file and code encoders use it.
    func withSecretBytes<R, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try secret.withUnsafeBytes(body)
    }

    /// Checks that `name` can be shown on one line and used as a file name
    /// (docs/beacon-format.md, section 10). All rules are on Unicode scalars,
    /// checked in this order: 1 to `maximumNameLength` scalars and at most
    /// `maximumNameBytes` UTF-8 bytes; first and last scalar not White_Space;
    /// no control character (U+0000–U+001F, U+007F–U+009F) or line/paragraph
    /// separator (U+2028, U+2029), and no `/` or `\` (the first offending
    /// scalar decides which); not starting with `.`.
    public static func validate(name: String) throws(AccountKeyError) {
        func fail(_ problem: AccountNameProblem) -> AccountKeyError { .invalidName(name, problem) }
        let scalars = name.unicodeScalars
        guard let first = scalars.first, let last = scalars.last else { throw fail(.empty) }
        guard scalars.count <= maximumNameLength, name.utf8.count <= maximumNameBytes else { throw fail(.tooLong) }
        guard !isWhiteSpace(first), !isWhiteSpace(last) else { throw fail(.surroundingWhitespace) }
        for scalar in scalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: throw fail(.controlCharacter)
            case 0x2F, 0x5C: throw fail(.pathSeparator)
            default: break
            }
        }
        guard first != "." else { throw fail(.leadingDot) }
    }

    /// Unicode's White_Space property, as a fixed list (it has not changed since Unicode 6.3).
    static func isWhiteSpace(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x09...0x0D, 0x20, 0x85, 0xA0, 0x1680, 0x2000...0x200A, 0x2028, 0x2029, 0x202F, 0x205F, 0x3000: true
        default: false
        }
    }

    /// Equal when both the name and the secret are equal (the secret is compared in constant time).
    public static func == (lhs: AccountKey, rhs: AccountKey) -> Bool {
        guard lhs.name == rhs.name else { return false }
        return lhs.withSecretBytes { left in
            rhs.withSecretBytes { right in
                var difference: UInt8 = 0
                for index in 0..<secretByteCount { difference |= left[index] ^ right[index] }
                return difference == 0
            }
        }
    }

    /// Hashes the name and the account ID (never the secret itself).
    public func hash(into hasher: inout Hasher) {
        hasher.combine(name)
        hasher.combine(id)
    }

    /// `AccountKey(name: "…", id: 0123456789abcdef)`: never the secret.
    public var description: String { "AccountKey(name: \(String(reflecting: name)), id: \(id))" }
    /// Same as `description`: never the secret.
    public var debugDescription: String { description }
    /// Shows only the name and the identifier to `dump` and debuggers.
    public var customMirror: Mirror { Mirror(self, children: ["name": name, "id": id], displayStyle: .struct) }
}
