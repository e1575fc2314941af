/// What the beacon's cipher and MAC need for one account and epoch, so the
/// recogniser's hot loop finds them in one place.
struct EpochCipher: Sendable {
    /// The epoch.
    let epoch: Epoch
    /// The epoch's 12-byte context, bound into the MAC.
    let context: EpochContext
    /// HMAC(encryption key, context) as a ChaCha20 key.
    let chacha: ChaCha20StreamKey
}
