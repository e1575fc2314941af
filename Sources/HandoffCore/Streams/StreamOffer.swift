/// What the origin tells the continuing device, inside the sealed continuation response, when the
/// activity supports streams (docs/continuation.md, section 10.2):
/// `version(1) = 1 ‖ psm(2, big-endian) ‖ secret(16)`.
///
/// The secret is one input of the stream keys; `description` and reflection show only the PSM.
public struct StreamOffer: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The LE L2CAP PSM the origin listens on for this stream, in 0x0080…0x00FF.
    public let psm: UInt16
    /// 16 random bytes, fresh for each offer.
    let secret: SecretBytes

    /// An offer of `psm` with the given secret (for vectors and decoding).
    /// - Throws: `StreamOfferError` for a PSM outside the dynamic range or a secret that is not 16 bytes.
    public init(psm: UInt16, secret: some Collection<UInt8>) throws(StreamOfferError) {
        guard StreamFormat.psmRange.contains(psm) else { throw .psmOutOfRange(psm) }
        guard secret.count == StreamFormat.secretLength else { throw .wrongSecretLength(secret.count) }
        self.psm = psm
        self.secret = SecretBytes(secret)
    }

    /// An offer of `psm` with a fresh secret from `generator`, which must be cryptographically secure outside tests.
    public init(psm: UInt16, using generator: inout some RandomNumberGenerator) throws(StreamOfferError) {
        var secret = randomBytes(StreamFormat.secretLength, using: &generator)
        defer { for index in secret.indices { secret[index] = 0 } }
        try self.init(psm: psm, secret: secret)
    }

    /// An offer of `psm` with a fresh secret from the system's secure generator.
    public init(psm: UInt16) throws(StreamOfferError) {
        var generator = SystemRandomNumberGenerator()
        try self.init(psm: psm, using: &generator)
    }

    /// Decodes the 19-byte version 1 encoding; never traps, whatever the bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(StreamOfferError) {
        let bytes = Array(bytes)
        guard bytes.count == StreamFormat.offerLength else { throw .wrongLength(bytes.count) }
        guard bytes[0] == StreamFormat.offerVersion else { throw .unsupportedVersion(bytes[0]) }
        try self.init(psm: UInt16(bytes[1]) << 8 | UInt16(bytes[2]), secret: bytes[3...])
    }

    /// The 19-byte encoding, secret included: it travels only inside the sealed response.
    public func encoded() -> [UInt8] {
        secret.withUnsafeBytes { [StreamFormat.offerVersion, UInt8(psm >> 8), UInt8(truncatingIfNeeded: psm)] + $0 }
    }

    /// Equal PSMs and secrets (the secrets compared in constant time).
    public static func == (lhs: StreamOffer, rhs: StreamOffer) -> Bool {
        lhs.psm == rhs.psm && lhs.secret.withUnsafeBytes { left in
            rhs.secret.withUnsafeBytes { right in zip(left, right).reduce(UInt8(0)) { $0 | ($1.0 ^ $1.1) } == 0 }
        }
    }

    /// Hashes the PSM only (equal offers have equal PSMs; the secret never feeds a hash table).
    public func hash(into hasher: inout Hasher) { hasher.combine(psm) }

    /// `StreamOffer(psm: 0x0081)`: never the secret.
    public var description: String { "StreamOffer(psm: 0x\(Hex.encode(psm, width: 4)))" }
    /// Same as `description`: never the secret.
    public var debugDescription: String { description }
    /// Shows only the PSM to `dump` and debuggers.
    public var customMirror: Mirror { Mirror(self, children: ["psm": psm], displayStyle: .struct) }
}
