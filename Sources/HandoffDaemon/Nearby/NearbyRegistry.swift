import Foundation
import HandoffCore

/// The activities heard from our other devices, with expiry and a size cap.
///
/// Entries are keyed by origin (account, epoch, per-epoch device id). Because
/// a device takes a fresh identity every epoch, a beacon from a new origin
/// that carries the same account, type and flags as an entry from the epoch
/// before is taken as that entry's continuation: it keeps its id and
/// `firstSeen`, so `list` and `watch` do not churn at every rotation.
///
/// Pure bookkeeping: time comes in as parameters, nothing is scheduled here.
public struct NearbyRegistry: Sendable {
    /// What an update did.
    public enum Change: Sendable, Equatable {
        case appeared(NearbyEntry)
        case updated(NearbyEntry)
        case refreshed(NearbyEntry)
    }

    public let capacity: Int
    public let expiry: Duration
    /// Weight of a new RSSI sample in the running average.
    public let rssiSmoothing: Double

    private var entries: [String: NearbyEntry] = [:]
    private var byOrigin: [BeaconOrigin: String] = [:]
    private var nextSerial: UInt64 = 0
    private let idSalt: UInt64

    public init(capacity: Int, expiry: Duration, rssiSmoothing: Double = 0.3, idSalt: UInt64 = .random(in: .min ... .max)) {
        self.capacity = max(1, capacity)
        self.expiry = expiry
        self.rssiSmoothing = rssiSmoothing
        self.idSalt = idSalt
    }

    public var count: Int { entries.count }
    public var all: [NearbyEntry] { entries.values.sorted { $0.firstSeen < $1.firstSeen || ($0.firstSeen == $1.firstSeen && $0.id < $1.id) } }
    public func entry(_ id: String) -> NearbyEntry? { entries[id] }
    public func entry(for origin: BeaconOrigin) -> NearbyEntry? { byOrigin[origin].flatMap { entries[$0] } }

    /// The earliest expiry, for scheduling the next `expire` call.
    public var nextExpiry: ContinuousClock.Instant? { entries.values.map(\.expires).min() }

    /// Records an accepted beacon.
    /// - Returns: what changed, plus any entry evicted to respect the cap.
    public mutating func record(
        _ beacon: RecognizedBeacon, rssi: Int16?, device: String?, wallClock: Date, now: ContinuousClock.Instant
    ) -> (change: Change, evicted: NearbyEntry?) {
        let sample = Self.usableRSSI(rssi)
        if let id = byOrigin[beacon.origin], var entry = entries[id] {
            let changed = entry.activityType != beacon.activityType || entry.flags != beacon.flags
            entry.activityType = beacon.activityType
            entry.typeHash = beacon.typeHash
            entry.flags = beacon.flags
            entry.beacon = beacon
            touch(&entry, rssi: sample, device: device, wallClock: wallClock, now: now)
            entries[id] = entry
            return (changed ? .updated(entry) : .refreshed(entry), nil)
        }
        if let predecessor = predecessor(of: beacon) {
            var entry = entries[predecessor]!
            byOrigin[entry.origin] = nil
            entry.origin = beacon.origin
            entry.beacon = beacon
            touch(&entry, rssi: sample, device: device, wallClock: wallClock, now: now)
            entries[entry.id] = entry
            byOrigin[beacon.origin] = entry.id
            return (.updated(entry), nil)
        }
        var evicted: NearbyEntry?
        if entries.count >= capacity, let oldest = entries.values.min(by: { $0.lastSeen < $1.lastSeen }) {
            evicted = remove(oldest.id)
        }
        var id: String
        repeat {
            nextSerial += 1
            id = makeID(serial: nextSerial)
        } while entries[id] != nil
        let entry = NearbyEntry(
            id: id, account: beacon.account, accountName: beacon.accountName,
            origin: beacon.origin, activityType: beacon.activityType, typeHash: beacon.typeHash, flags: beacon.flags,
            rssi: sample,
            firstSeen: wallClock, lastSeen: wallClock, expires: now + expiry, device: device, beacon: beacon)
        entries[entry.id] = entry
        byOrigin[beacon.origin] = entry.id
        return (.appeared(entry), evicted)
    }

    /// Notes that an already accepted beacon was heard again (bluetoothd reports
    /// an unchanged advertisement again): the entry stays alive.
    @discardableResult
    public mutating func heardAgain(
        _ origin: BeaconOrigin, rssi: Int16?, device: String?, wallClock: Date, now: ContinuousClock.Instant
    ) -> NearbyEntry? {
        guard let id = byOrigin[origin], var entry = entries[id] else { return nil }
        touch(&entry, rssi: Self.usableRSSI(rssi), device: device, wallClock: wallClock, now: now)
        entries[id] = entry
        return entry
    }

    /// Replaces an entry's resolved type (after apps declared new types).
    public mutating func updateType(_ id: String, to type: ResolvedActivityType) -> NearbyEntry? {
        guard var entry = entries[id], entry.activityType != type else { return nil }
        entry.activityType = type
        entries[id] = entry
        return entry
    }

    /// Removes and returns every entry whose expiry has passed.
    public mutating func expire(now: ContinuousClock.Instant) -> [NearbyEntry] {
        let gone = entries.values.filter { $0.expires <= now }.map(\.id)
        return gone.compactMap { remove($0) }
    }

    /// Removes one entry.
    @discardableResult
    public mutating func remove(_ id: String) -> NearbyEntry? {
        guard let entry = entries.removeValue(forKey: id) else { return nil }
        byOrigin[entry.origin] = nil
        return entry
    }

    /// Removes the entries of accounts no longer known.
    public mutating func retainAccounts(_ accounts: Set<AccountID>) -> [NearbyEntry] {
        let gone = entries.values.filter { !accounts.contains($0.account) }.map(\.id)
        return gone.compactMap { remove($0) }
    }

    private mutating func touch(
        _ entry: inout NearbyEntry, rssi: Double?, device: String?, wallClock: Date, now: ContinuousClock.Instant
    ) {
        entry.lastSeen = wallClock
        entry.expires = now + expiry
        if let device { entry.device = device }
        if let rssi {
            entry.rssi = entry.rssi.map { $0 + rssiSmoothing * (rssi - $0) } ?? rssi
        }
    }

    /// An entry of the same account, type and flags from the epoch just before,
    /// not yet taken over by another origin of this epoch.
    private func predecessor(of beacon: RecognizedBeacon) -> String? {
        let candidates = entries.values.filter { entry in
            entry.account == beacon.account && entry.typeHash == beacon.typeHash && entry.flags == beacon.flags
                && entry.origin.epoch.distance(to: beacon.epoch) == 1
        }
        return candidates.max { $0.lastSeen < $1.lastSeen }?.id
    }

    /// btvirt and some controllers report 127, meaning "not available".
    static func usableRSSI(_ rssi: Int16?) -> Double? {
        guard let rssi, rssi != 127, rssi < 20 else { return nil }
        return Double(rssi)
    }

    private func makeID(serial: UInt64) -> String {
        // Short, unguessable across daemon restarts, and never reused within one.
        var hasher = Hasher()
        hasher.combine(idSalt)
        hasher.combine(serial)
        let mixed = UInt32(truncatingIfNeeded: UInt64(bitPattern: Int64(hasher.finalize())))
        return String(format: "%08x", mixed)
    }
}
