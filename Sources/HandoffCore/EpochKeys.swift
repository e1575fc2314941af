import Crypto

/// One account's beacon keys for one epoch: the eight recognition tags and
/// the cipher keys. Computed once per epoch by the encoder and, for the whole
/// window, by the recogniser.
struct EpochKeys: Sendable {
    /// The epoch's cipher keys.
    let cipher: EpochCipher
    /// `tags[slot]`: the first 4 bytes of HMAC(tag key, context ‖ slot), big-endian.
    let tags: [UInt32]

    /// The epoch.
    var epoch: Epoch { cipher.epoch }

    /// Derives the keys of `epoch` from `schedule`.
    init(schedule: AccountKeySchedule, epoch: Epoch) {
        let context = epoch.context
        var message = context.bytes + [0]
        var tags = [UInt32]()
        tags.reserveCapacity(BeaconFormat.slotCount)
        for slot in 0..<BeaconFormat.slotCount {
            message[EpochContext.byteCount] = UInt8(slot)
            tags.append(message.withUnsafeBytes { schedule.recognitionTagKey.prefixWord(of: $0) })
        }
        self.tags = tags
        let epochKey = context.bytes.withUnsafeBytes { schedule.encryptionKey.authenticationCode(for: $0) }
        cipher = EpochCipher(epoch: epoch, context: context, chacha: ChaCha20StreamKey(key: SymmetricKey(data: epochKey)))
    }
}
