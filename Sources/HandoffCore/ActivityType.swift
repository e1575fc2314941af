/// A validated activity type: a reverse-DNS string such as
/// `org.example.editor.document`, like the entries of `NSUserActivityTypes`.
///
/// Rules: 3 to 255 ASCII bytes; at least two dot-separated labels; each
/// label 1 to 63 characters from `A-Z a-z 0-9 - _`, starting with a letter
/// or digit. Comparison is case-sensitive.
public struct ActivityType: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The type string.
    public let rawValue: String

    /// Validates `rawValue`.
    /// - Throws: `ActivityTypeError` naming the rule that failed.
    public init(_ rawValue: String) throws(ActivityTypeError) {
        let utf8 = Array(rawValue.utf8)
        guard utf8.count >= 3, utf8.count <= 255 else { throw .badLength(utf8.count) }
        let labels = utf8.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { throw .notReverseDNS(rawValue) }
        for label in labels {
            guard let first = label.first, label.count <= 63 else { throw .badLabel(rawValue) }
            guard Self.isAlphanumeric(first) else { throw .badLabel(rawValue) }
            for byte in label where !(Self.isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")) {
                throw .badCharacter(rawValue)
            }
        }
        self.rawValue = rawValue
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            true
        default:
            false
        }
    }

    /// The keyed 4-byte hash of this type under `account`'s type-hash key: what a beacon carries.
    public func hash(for account: AccountKey) -> ActivityTypeHash {
        let key = account.schedule.activityTypeHashKey
        let word = rawValue.utf8.withContiguousStorageIfAvailable { bytes in
            key.prefixWord(of: UnsafeRawBufferPointer(bytes))
        } ?? Array(rawValue.utf8).withUnsafeBytes { key.prefixWord(of: $0) }
        return ActivityTypeHash(rawValue: word)
    }

    /// The type string.
    public var description: String { rawValue }

    /// Orders by the type string.
    public static func < (lhs: ActivityType, rhs: ActivityType) -> Bool { lhs.rawValue < rhs.rawValue }
}
