/// A beacon that a known account's key authenticated, inside the accepted
/// epoch window, and not seen before.
public struct RecognizedBeacon: Hashable, Sendable {
    /// The account whose key recognised it.
    public let account: AccountID
    /// That account's local display name.
    public let accountName: String
    /// Every decrypted field, including the slot, salt and header nibble.
    public let fields: BeaconFields
    /// The activity type, resolved through the declared types.
    public let activityType: ResolvedActivityType
    /// The recognition tag, bytes 1..<5 of the payload (big-endian): a
    /// continuation request names the beacon by it (docs/continuation.md).
    public let tag: UInt32

    /// Groups the parts.
    public init(
        account: AccountID, accountName: String, fields: BeaconFields, activityType: ResolvedActivityType, tag: UInt32
    ) {
        self.account = account
        self.accountName = accountName
        self.fields = fields
        self.activityType = activityType
        self.tag = tag
    }

    /// The recognition tag as the 4 bytes the payload carried.
    public var tagBytes: [UInt8] {
        [UInt8(tag >> 24), UInt8(truncatingIfNeeded: tag >> 16), UInt8(truncatingIfNeeded: tag >> 8), UInt8(truncatingIfNeeded: tag)]
    }

    /// The sending device for this epoch: the key for a nearby-activity registry.
    public var origin: BeaconOrigin { BeaconOrigin(account: account, epoch: fields.epoch, device: fields.device) }
    /// The epoch the beacon was made for (the receiver's, or one either side).
    public var epoch: Epoch { fields.epoch }
    /// The sender's per-epoch device identifier.
    public var device: DeviceID { fields.device }
    /// The keyed activity type hash.
    public var typeHash: ActivityTypeHash { fields.typeHash }
    /// The small flags.
    public var flags: BeaconFlags { fields.flags }
    /// The sequence number.
    public var sequence: UInt16 { fields.sequence }
}
