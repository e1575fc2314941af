/// Constants of the version 1 beacon format (docs/beacon-format.md).
///
/// | bytes   | field                                              |
/// |---------|----------------------------------------------------|
/// | 0       | header: version (high nibble) + random low nibble  |
/// | 1..<5   | recognition tag                                    |
/// | 5..<8   | random salt                                        |
/// | 8..<19  | ciphertext: type hash 4, flags 1, sequence 2, device 4 |
/// | 19..<24 | MAC (truncated HMAC-SHA256)                        |
public enum BeaconFormat {
    /// The format version in the header's high nibble.
    public static let version: UInt8 = 1
    /// Length of the manufacturer-data payload: exactly 24 bytes.
    public static let payloadLength = 24
    /// Number of recognition-tag slots per account and epoch.
    public static let slotCount = 8
    /// A beacon is accepted from the receiver's epoch and this many epochs either side.
    public static let acceptedEpochSkew: Int64 = 1
    /// The recogniser also knows the tags this many epochs either side, so it
    /// can report "too old" or "too new" instead of "unknown" (never accepted).
    public static let diagnosedEpochSkew: Int64 = 2
    /// Length of the MAC in bytes (40 bits).
    public static let macLength = 5

    static let headerOffset = 0
    static let tagOffset = 1
    static let saltOffset = 5
    static let ciphertextOffset = 8
    static let ciphertextLength = 11
    static let macOffset = 19

    /// The format version of a payload (its first byte's high nibble), or nil if it is empty.
    public static func version(of payload: some Collection<UInt8>) -> UInt8? {
        payload.first.map { $0 >> 4 }
    }
}
