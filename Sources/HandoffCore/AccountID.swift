/// A stable, local identifier for an account that reveals nothing about its key.
///
/// It is the first 8 bytes of an HKDF-SHA256 output of the account secret under
/// its own label (see docs/beacon-format.md, "Key schedule"), so it can appear
/// in logs, file listings and D-Bus replies. It is never transmitted in a beacon.
public struct AccountID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The identifier as a 64-bit number.
    public let rawValue: UInt64

    /// Wraps a raw identifier.
    public init(rawValue: UInt64) {
        self.rawValue = rawValue
    }

    /// Parses the 16-hex-digit form produced by `description`.
    public init?(_ text: String) {
        guard text.utf8.count == 16, let bytes = Hex.decode(text) else { return nil }
        rawValue = bytes.reduce(0) { $0 << 8 | UInt64($1) }
    }

    /// Sixteen lowercase hex digits.
    public var description: String { Hex.encode(rawValue, width: 16) }

    /// Orders by the numeric value (for stable listings).
    public static func < (lhs: AccountID, rhs: AccountID) -> Bool { lhs.rawValue < rhs.rawValue }
}
