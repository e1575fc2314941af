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
            message[12] = UInt8(slot)
            tags.append(message.withUnsafeBytes { schedule.recognitionTagKey.authenticate($0) }.a)
        }
        self.tags = tags
        cipher = EpochCipher(
            epoch: epoch, context: context,
            chacha: ChaCha20Key(bytes: schedule.encryptionKey.authenticate(context.bytes))
        )
    }
}
