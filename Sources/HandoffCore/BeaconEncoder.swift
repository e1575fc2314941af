/// Builds one device's beacons.
///
/// Per account and epoch it draws, from the injected random generator, a
/// recognition-tag slot, a device identifier and a random starting sequence
/// number; every beacon then gets a fresh random header nibble and salt and
/// the next sequence number. Nothing carries over from one epoch to the next.
/// With a `cardDigest`, the device identifier's high 16 bits are derived from
/// it instead of drawn (docs/devices.md, section 3).
///
/// Random draws, in order (this order is part of the deterministic test
/// contract): at an epoch start `slot` (`UInt8.random(in: 0..<8)`), `device`
/// (`UInt32.random(in: .min ... .max)`), `sequence` start
/// (`UInt16.random(in: .min ... .max)`); per beacon a 28-bit value
/// (`UInt32.random(in: 0..<(1 << 28))`) whose high 4 bits are the header nibble
/// and low 24 bits the salt, redrawn while this encoder already used that
/// value for the account in this epoch.
///
/// Nonces: the ChaCha20 nonce is header ‖ tag ‖ salt, and within an epoch the
/// tag is fixed, so the encoder remembers every nibble-and-salt value it used
/// for the account in the epoch (a few bytes per beacon, forgotten at the next
/// epoch) and never repeats one: one encoder never repeats a nonce.
public struct BeaconEncoder: Sendable {
    private struct Session: Sendable {
        let keys: EpochKeys
        let slot: UInt8
        var device: DeviceID
        var nextSequence: UInt16
        var beaconsWithThisDevice = 0
        /// Every nibble-and-salt value used with this epoch key.
        var usedNonces: Set<UInt32> = []
        var lastType: (type: ActivityType, hash: ActivityTypeHash)?
    }

    /// After this many beacons in one epoch the encoder starts a new device
    /// identifier and sequence, so receivers' serial-number comparison stays sound.
    public static let maximumBeaconsPerDevice = 32_768
    /// Number of distinct nibble-and-salt values (28 bits): the most beacons
    /// one encoder can send for one account in one epoch without repeating a
    /// nonce. Sending more is a programming error (the daemon sends about one
    /// a second).
    public static let noncesPerEpoch = 1 << 28

    /// The parameters shared with the receivers.
    public let configuration: BeaconConfiguration
    /// The digest of this device's card (`DeviceCard.digest`), when it has one: the
    /// high 16 bits of every device identifier are then derived from it
    /// (`DeviceID.knownPart`), so that the account's other devices tell whose beacon
    /// it is; the low 16 bits stay random. Without one the identifier is all random.
    public var cardDigest: [UInt8]?
    private var sessions: [AccountID: Session] = [:]
    /// Origins this device used, for filtering out its own beacons: the current
    /// and previous per account.
    private var ownOrigins: [AccountID: [BeaconOrigin]] = [:]

    /// An encoder with no state yet.
    public init(configuration: BeaconConfiguration = .default) {
        self.configuration = configuration
    }

    /// The next beacon for `account` announcing `activityType` with `flags`,
    /// at `now` seconds since the Unix epoch, drawing randomness from `generator`.
    /// Returns the 24-byte manufacturer-data payload.
    public mutating func encode(
        account: AccountKey, activityType: ActivityType, flags: BeaconFlags, now: Double,
        using generator: inout some RandomNumberGenerator
    ) -> [UInt8] {
        let epoch = configuration.epoch(containing: now)
        // Take the session out of the dictionary so that mutating it does not
        // copy its nonce set.
        var session: Session
        if let existing = sessions.removeValue(forKey: account.id), existing.keys.epoch == epoch {
            session = existing
        } else {
            session = Self.startSession(account: account, epoch: epoch, using: &generator)
            session.device = identifier(random: session.device.rawValue, account: account, epoch: epoch)
            remember(BeaconOrigin(account: account.id, epoch: epoch, device: session.device))
        }
        if session.beaconsWithThisDevice >= Self.maximumBeaconsPerDevice {
            session.device = identifier(
                random: UInt32.random(in: .min ... .max, using: &generator), account: account, epoch: epoch)
            session.nextSequence = UInt16.random(in: .min ... .max, using: &generator)
            session.beaconsWithThisDevice = 0
            remember(BeaconOrigin(account: account.id, epoch: epoch, device: session.device))
        }

        precondition(session.usedNonces.count < Self.noncesPerEpoch, "every nonce of this epoch is used")
        var nonce: UInt32
        repeat {
            nonce = UInt32.random(in: 0..<UInt32(Self.noncesPerEpoch), using: &generator)
        } while !session.usedNonces.insert(nonce).inserted

        let typeHash: ActivityTypeHash
        if let last = session.lastType, last.type == activityType {
            typeHash = last.hash
        } else {
            typeHash = activityType.hash(for: account)
            session.lastType = (activityType, typeHash)
        }

        let fields = BeaconFields(
            headerNibble: UInt8(nonce >> 24), epoch: epoch, slot: session.slot, salt: nonce & 0x00ff_ffff,
            typeHash: typeHash, flags: flags, sequence: session.nextSequence, device: session.device
        )
        session.nextSequence &+= 1
        session.beaconsWithThisDevice += 1
        sessions[account.id] = session
        return BeaconCrypto.seal(fields, keys: session.keys, macKey: account.schedule.authenticationKey)
    }

    /// `encode(account:activityType:flags:now:using:)` with the system's secure generator.
    public mutating func encode(
        account: AccountKey, activityType: ActivityType, flags: BeaconFlags, now: Double
    ) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return encode(account: account, activityType: activityType, flags: flags, now: now, using: &generator)
    }

    /// The origin this device currently uses for `account`, if it encoded one.
    public func currentOrigin(for account: AccountID) -> BeaconOrigin? {
        ownOrigins[account]?.last
    }

    /// Whether `beacon` was sent by this encoder (this epoch or the previous
    /// one): the daemon ignores its own beacons.
    public func isOwn(_ beacon: RecognizedBeacon) -> Bool {
        ownOrigins[beacon.account]?.contains(beacon.origin) ?? false
    }

    private static func startSession(
        account: AccountKey, epoch: Epoch, using generator: inout some RandomNumberGenerator
    ) -> Session {
        let slot = UInt8.random(in: 0..<UInt8(BeaconFormat.slotCount), using: &generator)
        let device = DeviceID(rawValue: UInt32.random(in: .min ... .max, using: &generator))
        let sequence = UInt16.random(in: .min ... .max, using: &generator)
        return Session(
            keys: EpochKeys(schedule: account.schedule, epoch: epoch), slot: slot, device: device,
            nextSequence: sequence
        )
    }

    /// `random`, or with a card digest its low 16 bits under the derived known part.
    private func identifier(random: UInt32, account: AccountKey, epoch: Epoch) -> DeviceID {
        guard let cardDigest else { return DeviceID(rawValue: random) }
        let known = DeviceID.knownPart(cardDigest: cardDigest, schedule: account.schedule, epoch: epoch)
        return DeviceID(rawValue: UInt32(known) << 16 | random & 0xFFFF)
    }

    private mutating func remember(_ origin: BeaconOrigin) {
        var origins = ownOrigins[origin.account, default: []]
        origins.removeAll { $0.epoch.index + 1 < origin.epoch.index || $0.epoch.index > origin.epoch.index }
        origins.append(origin)
        ownOrigins[origin.account] = Array(origins.suffix(4))
    }
}
