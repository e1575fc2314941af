/// The pure part of `handoffctl devices remove` on the removing device (docs/devices.md,
/// section 7): a new account key, and one envelope for each remaining device of the roster.
public struct RekeyPlan: Sendable {
    /// The new account key, under the old account's name. It replaces the old one for this
    /// device's own beacons at once.
    public let newAccount: AccountKey
    /// The removed devices' fingerprints.
    public let removed: [String]
    /// One envelope per roster device that is not removed, in roster order.
    public let envelopes: [RekeyEnvelope]

    /// Plans the removal of `removing` (fingerprints, 1 to `RekeyFormat.maximumRemoved`, not this
    /// device's own) from `account`, whose roster on this device is `roster`. The new secret's
    /// 32 bytes come from `generator` first, then each envelope's nonce, in roster order.
    /// `removing` may name devices no longer in the roster (a removal still pending for a device
    /// that was away keeps the earlier removed devices in its list).
    /// - Throws: `RekeyError`: nothing or too much removed, a bad fingerprint, this device removed,
    ///   or a roster device whose key gives no shared secret.
    public init(
        account: AccountKey, removing: [String], roster: DeviceRoster, identity: DeviceIdentity,
        using generator: inout some RandomNumberGenerator
    ) throws(RekeyError) {
        let list = try RekeyEnvelope.removedList(removing)
        guard !list.isEmpty else { throw .nothingRemoved }
        guard !list.contains(where: { $0.bytes == identity.card.fingerprintBytes }) else { throw .senderRemoved }
        var newAccount: AccountKey
        repeat {
            // A name that is valid for the old key is valid for the new one.
            newAccount = try! AccountKey.generate(name: account.name, using: &generator)
        } while newAccount.id == account.id
        let removedBytes = list.map(\.bytes)
        var envelopes: [RekeyEnvelope] = []
        for device in roster.devices where !removedBytes.contains(device.card.fingerprintBytes) {
            envelopes.append(
                try RekeyEnvelope.seal(
                    newAccount: newAccount, removing: list.map(\.text), from: identity, to: device.card,
                    oldAccount: account, using: &generator))
        }
        self.newAccount = newAccount
        removed = list.map(\.text)
        self.envelopes = envelopes
    }

    /// The envelope for the roster device with `fingerprint`, if it remains.
    public func envelope(for fingerprint: String) -> RekeyEnvelope? {
        envelopes.first { $0.recipient == fingerprint.lowercased() }
    }
}
