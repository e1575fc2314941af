/// Every field of one beacon, in the clear.
///
/// `BeaconCodec.seal` turns these into the 24-byte payload given an account
/// key; `BeaconEncoder` fills them in (with its own randomness) for normal use.
/// The explicit form exists for test vectors and tools.
public struct BeaconFields: Hashable, Sendable {
    /// The header's random low nibble (0...15).
    public var headerNibble: UInt8
    /// The epoch the beacon is made for.
    public var epoch: Epoch
    /// The recognition-tag slot (0..<8), chosen per device per epoch.
    public var slot: UInt8
    /// The 24-bit random salt (0..<2^24).
    public var salt: UInt32
    /// Keyed hash of the activity type.
    public var typeHash: ActivityTypeHash
    /// The small flags.
    public var flags: BeaconFlags
    /// Sequence number: random start per epoch, then +1 per new beacon.
    public var sequence: UInt16
    /// The sender's per-epoch device identifier.
    public var device: DeviceID

    /// Groups the fields.
    /// - Precondition: `headerNibble < 16`, `slot < 8`, `salt < 2^24`.
    public init(
        headerNibble: UInt8, epoch: Epoch, slot: UInt8, salt: UInt32,
        typeHash: ActivityTypeHash, flags: BeaconFlags, sequence: UInt16, device: DeviceID
    ) {
        precondition(headerNibble < 16, "the header nibble has 4 bits")
        precondition(Int(slot) < BeaconFormat.slotCount, "slot out of range")
        precondition(salt < 1 << 24, "the salt has 24 bits")
        self.headerNibble = headerNibble
        self.epoch = epoch
        self.slot = slot
        self.salt = salt
        self.typeHash = typeHash
        self.flags = flags
        self.sequence = sequence
        self.device = device
    }
}
