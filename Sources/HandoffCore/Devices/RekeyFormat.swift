/// Constants of a rekey: the envelope that carries a new account secret from one device to
/// another (docs/devices.md, section 7) and the exchange that delivers it
/// (docs/continuation.md, section 11).
public enum RekeyFormat {
    /// The envelope's first byte.
    public static let envelopeVersion: UInt8 = 1
    /// The most devices one rekey removes.
    public static let maximumRemoved = 8
    /// Bytes of the new account secret.
    public static let secretLength = AccountKey.secretByteCount
    /// The sealed plaintext: new secret, removed count, removed fingerprints padded to `maximumRemoved`.
    public static let plaintextLength = secretLength + 1 + maximumRemoved * DeviceCard.fingerprintLength
    /// The whole envelope: version, nonce, sealed plaintext, Poly1305 tag (126 bytes).
    public static let envelopeLength = 1 + 12 + plaintextLength + 16
    /// The acknowledgement in an `ok` response.
    public static let acknowledgementLength = 32

    /// HKDF salt prefix; the old account's identifier follows.
    static let saltLabel = Array("handoff v1 rekey".utf8)
    /// HKDF info prefixes; the sender's and the recipient's public keys follow.
    static let envelopeKeyLabel = Array("handoff v1 rekey envelope key".utf8)
    static let acknowledgementKeyLabel = Array("handoff v1 rekey acknowledgement key".utf8)
    /// The envelope's associated data, before the version byte.
    static let envelopeLabel = Array("handoff v1 rekey envelope".utf8)
    /// What the acknowledgement authenticates, before the request nonce and the new account identifier.
    static let installedLabel = Array("handoff v1 rekey installed".utf8)
}
