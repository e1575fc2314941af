/// The other devices of one account that this device knows (docs/devices.md,
/// section 4): their cards, learned in introductions, and when each was last heard.
///
/// Pure state; the daemon keeps one per account and stores it. A beacon's
/// device identifier names a roster device when its high 16 bits are the
/// device's known part for the beacon's epoch (`DeviceID.knownPart`).
public struct DeviceRoster: Sendable, Equatable, Codable {
    /// One known device.
    public struct Device: Sendable, Equatable, Codable {
        public var card: DeviceCard
        /// When its card was learned (or learned again, renamed), in seconds since the Unix epoch.
        public var introduced: Double
        /// When one of its beacons was last heard, in seconds since the Unix epoch.
        public var lastHeard: Double?

        public init(card: DeviceCard, introduced: Double, lastHeard: Double? = nil) {
            self.card = card
            self.introduced = introduced
            self.lastHeard = lastHeard
        }
    }

    /// The most devices one roster keeps: a new one then replaces the one heard longest ago.
    public static let capacity = 64

    /// The devices, in the order they were first introduced.
    public private(set) var devices: [Device] = []

    public init(devices: [Device] = []) {
        self.devices = Array(devices.suffix(Self.capacity))
    }

    /// Records `card`, heard at `now`: a new device, or a known key under a new name.
    /// Returns whether anything changed.
    @discardableResult
    public mutating func learn(_ card: DeviceCard, now: Double) -> Bool {
        if let index = devices.firstIndex(where: { $0.card.publicKey == card.publicKey }) {
            devices[index].lastHeard = now
            guard devices[index].card != card else { return false }
            devices[index].card = card
            devices[index].introduced = now
            return true
        }
        if devices.count >= Self.capacity,
            let oldest = devices.indices.min(by: {
                (devices[$0].lastHeard ?? devices[$0].introduced) < (devices[$1].lastHeard ?? devices[$1].introduced)
            })
        {
            devices.remove(at: oldest)
        }
        devices.append(Device(card: card, introduced: now, lastHeard: now))
        return true
    }

    /// The device whose beacon carried `device` in `epoch`, if exactly one roster device
    /// has that known part (two with the same known part, 1 in 65,536 per pair and
    /// epoch, name neither).
    public func device(sending device: DeviceID, schedule: AccountKeySchedule, epoch: Epoch) -> Device? {
        var found: Device?
        for candidate in devices
        where DeviceID.knownPart(cardDigest: candidate.card.digest, schedule: schedule, epoch: epoch) == device.knownPart {
            guard found == nil else { return nil }
            found = candidate
        }
        return found
    }

    /// Notes that the device with `publicKey` was heard at `now`.
    public mutating func heard(_ publicKey: [UInt8], now: Double) {
        guard let index = devices.firstIndex(where: { $0.card.publicKey == publicKey }) else { return }
        devices[index].lastHeard = max(devices[index].lastHeard ?? now, now)
    }

    /// Forgets the device with `publicKey`; returns whether it was known.
    @discardableResult
    public mutating func remove(_ publicKey: [UInt8]) -> Bool {
        let count = devices.count
        devices.removeAll { $0.card.publicKey == publicKey }
        return devices.count != count
    }
}
