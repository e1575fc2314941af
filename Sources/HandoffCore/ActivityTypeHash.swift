/// The 4-byte keyed hash of an activity type that a beacon carries:
/// the first 4 bytes of HMAC-SHA256(account type-hash key, UTF-8 of the type).
///
/// Keyed by the account, so a stranger who decrypted nothing still could not
/// test for a well-known type; a key holder maps it back through the types
/// its local apps declared (`ActivityTypeResolver`).
public struct ActivityTypeHash: Hashable, Sendable, CustomStringConvertible {
    /// The hash as a big-endian 32-bit number.
    public let rawValue: UInt32

    /// Wraps a raw hash.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Eight lowercase hex digits.
    public var description: String { Hex.encode(rawValue, width: 8) }
}
