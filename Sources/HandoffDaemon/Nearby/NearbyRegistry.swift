#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore

/// The activities heard from our other devices, with expiry and a size cap.
///
/// Entries are keyed by origin (account, epoch, per-epoch device id). Because
/// a device takes a fresh identity every epoch, a beacon from a new origin
/// that carries the same account and type as an entry from the epoch before
/// (preferring one with the same flags) is taken as that entry's continuation: it keeps its id and
/// `firstSeen`, so `list` and `watch` do not churn at every rotation.
///
/// Only the origin's newest beacon, heard from the address it was first heard
/// from and while it is fresh, keeps an entry nearby (docs/beacon-format.md,
/// section 6): a beacon copied off the air and sent again, from another address
/// or long after, is a `copy` and changes nothing. The state for that is two
/// fields per entry, so it is bounded by the capacity and checked in O(1).
///
/// Pure bookkeeping: time comes in as parameters, nothing is scheduled here.
public struct NearbyRegistry: Sendable {
    /// What an update did.
    public enum Change: Sendable, Equatable {
        case appeared(NearbyEntry)
        case updated(NearbyEntry)
        case refreshed(NearbyEntry)
        /// A copy of one of the entry's beacons: the entry is left as it was.
        case copy(NearbyEntry, Copy)
    }

    /// Why a beacon of a listed origin did not keep its entry nearby.
    public enum Copy: Sendable, Equatable {
        /// The entry's newest beacon, from another address than the one it was first heard from.
        case otherAddress
        /// A beacon older than the entry's newest (in 16-bit serial order).
        case older
        /// The entry's newest beacon, first heard longer than `freshness` ago.
        case stale
    }

    public let capacity: Int
    public let expiry: Duration
    /// How long after it was first heard a beacon's repeats keep its entry nearby:
    /// one renewal interval of the origin (`Advertiser.renewalInterval`), by when
    /// the origin has sent a new beacon. So a copy, even from the origin's own
    /// address, keeps an entry at most `expiry + freshness` after the origin stopped.
    public let freshness: Duration
    /// Weight of a new RSSI sample in the running average.
    public let rssiSmoothing: Double

    private var entries: [String: NearbyEntry] = [:]
    private var byOrigin: [BeaconOrigin: String] = [:]
    /// The entries' ids by account, type hash and epoch: where `predecessor` looks,
    /// so that a beacon of a new origin does not visit every entry.
    private var byLineage: [Lineage: Set<String>] = [:]

    private struct Lineage: Hashable {
        let account: AccountID
        let typeHash: ActivityTypeHash
        let epoch: Epoch

        init(_ entry: NearbyEntry) {
            self.init(account: entry.account, typeHash: entry.typeHash, epoch: entry.origin.epoch)
        }

        init(account: AccountID, typeHash: ActivityTypeHash, epoch: Epoch) {
            self.account = account
            self.typeHash = typeHash
            self.epoch = epoch
        }
    }
    private var nextSerial: UInt64 = 0
    private let idSalt: UInt64

    /// - Parameter freshness: nil means one renewal interval as the advertiser
    ///   derives it from `expiry` (a third of it, at least a second).
    public init(
        capacity: Int, expiry: Duration, freshness: Duration? = nil, rssiSmoothing: Double = 0.3,
        idSalt: UInt64 = .random(in: .min ... .max)
    ) {
        self.capacity = max(1, capacity)
        self.expiry = expiry
        self.freshness = freshness ?? max(.seconds(1), expiry / 3)
        self.rssiSmoothing = rssiSmoothing
        self.idSalt = idSalt
    }

    public var count: Int { entries.count }
    public var all: [NearbyEntry] { entries.values.sorted { $0.firstSeen < $1.firstSeen || ($0.firstSeen == $1.firstSeen && $0.id < $1.id) } }
    public func entry(_ id: String) -> NearbyEntry? { entries[id] }
    public func entry(for origin: BeaconOrigin) -> NearbyEntry? { byOrigin[origin].flatMap { entries[$0] } }

    /// The earliest expiry, for scheduling the next `expire` call.
    public var nextExpiry: ContinuousClock.Instant? { entries.values.map(\.expires).min() }

    /// Records an accepted beacon, heard from `address`.
    /// - Returns: what changed, plus any entry evicted to respect the cap.
    public mutating func record(
        _ beacon: RecognizedBeacon, rssi: Int16?, device: String?, address: String, wallClock: Date,
        now: ContinuousClock.Instant
    ) -> (change: Change, evicted: NearbyEntry?) {
        let sample = Self.usableRSSI(rssi)
        if let id = byOrigin[beacon.origin], var entry = entries[id] {
            // The recognizer forgot it (a new account list rebuilds it): a repeat.
            if beacon.sequence == entry.sequence {
                let change = heardAgain(
                    beacon.origin, sequence: beacon.sequence, rssi: rssi, device: device, address: address,
                    wallClock: wallClock, now: now)
                return (change ?? .refreshed(entry), nil)
            }
            // Accepted once by the recognizer (never heard here), but older than the
            // newest we have: only a recording of the origin's beacons can send it now.
            guard Self.isAhead(beacon.sequence, of: entry.sequence) else { return (.copy(entry, .older), nil) }
            let changed = entry.activityType != beacon.activityType || entry.flags != beacon.flags
            unindex(entry)
            entry.activityType = beacon.activityType
            entry.typeHash = beacon.typeHash
            entry.flags = beacon.flags
            entry.beacon = beacon
            entry.beaconAddress = address
            entry.beaconHeard = now
            touch(&entry, rssi: sample, device: device, wallClock: wallClock, now: now)
            entries[id] = entry
            index(entry)
            return (changed ? .updated(entry) : .refreshed(entry), nil)
        }
        if let predecessor = predecessor(of: beacon) {
            var entry = entries[predecessor]!
            byOrigin[entry.origin] = nil
            unindex(entry)
            entry.origin = beacon.origin
            entry.activityType = beacon.activityType
            entry.typeHash = beacon.typeHash
            entry.flags = beacon.flags
            entry.beacon = beacon
            entry.beaconAddress = address
            entry.beaconHeard = now
            touch(&entry, rssi: sample, device: device, wallClock: wallClock, now: now)
            entries[entry.id] = entry
            byOrigin[beacon.origin] = entry.id
            index(entry)
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
            firstSeen: wallClock, lastSeen: wallClock, expires: now + expiry, device: device, beacon: beacon,
            beaconAddress: address, beaconHeard: now)
        entries[entry.id] = entry
        byOrigin[beacon.origin] = entry.id
        index(entry)
        return (.appeared(entry), evicted)
    }

    /// Notes that an already accepted beacon was heard again from `address`.
    ///
    /// bluetoothd reports an unchanged advertisement again and again: the entry
    /// stays alive (`refreshed`) when it is the origin's newest beacon, heard from
    /// the address it was first heard from, within `freshness` of first hearing it.
    /// Anything else is a `copy` and changes nothing: with address privacy every new
    /// beacon goes out from a fresh address, and the origin renews its beacon every
    /// renewal interval, so its own repeats always pass.
    /// - Returns: nil when no entry has this origin.
    @discardableResult
    public mutating func heardAgain(
        _ origin: BeaconOrigin, sequence: UInt16, rssi: Int16?, device: String?, address: String, wallClock: Date,
        now: ContinuousClock.Instant
    ) -> Change? {
        let outcome = repeatHeard(
            origin, sequence: sequence, rssi: rssi, device: device, address: address, wallClock: wallClock, now: now)
        guard let entry = entry(for: origin) else { return nil }
        switch outcome {
        case .refreshed: return .refreshed(entry)
        case .copy(let copy): return .copy(entry, copy)
        case .notListed: return nil
        }
    }

    /// What `repeatHeard` did.
    public enum Repeat: Sendable, Equatable {
        case refreshed
        case copy(Copy)
        /// No entry has this origin.
        case notListed
    }

    /// `heardAgain` without handing back the entry: the path of every repeat bluetoothd
    /// reports, so the entry is read and changed where it lies, never copied.
    public mutating func repeatHeard(
        _ origin: BeaconOrigin, sequence: UInt16, rssi: Int16?, device: String?, address: String, wallClock: Date,
        now: ContinuousClock.Instant
    ) -> Repeat {
        guard let id = byOrigin[origin], let index = entries.index(forKey: id) else { return .notListed }
        // One inout access: the entry is checked and changed in its storage (a read through the
        // subscript would copy all of it, each time).
        return Self.repeatHeard(
            &entries.values[index], sequence: sequence, rssi: Self.usableRSSI(rssi), device: device, address: address,
            wallClock: wallClock, now: now, freshness: freshness, expires: now + expiry, smoothing: rssiSmoothing)
    }

    private static func repeatHeard(
        _ entry: inout NearbyEntry, sequence: UInt16, rssi: Double?, device: String?, address: String, wallClock: Date,
        now: ContinuousClock.Instant, freshness: Duration, expires: ContinuousClock.Instant, smoothing: Double
    ) -> Repeat {
        guard sequence == entry.sequence else { return .copy(.older) }
        guard address == entry.beaconAddress else { return .copy(.otherAddress) }
        guard now - entry.beaconHeard <= freshness else { return .copy(.stale) }
        touch(&entry, rssi: rssi, device: device, wallClock: wallClock, expires: expires, smoothing: smoothing)
        return .refreshed
    }

    /// Names an entry's origin device; returns the entry when that changed it.
    public mutating func setDevice(_ id: String, name: String, fingerprint: String) -> NearbyEntry? {
        guard var entry = entries[id], entry.deviceName != name || entry.deviceFingerprint != fingerprint else { return nil }
        entry.deviceName = name
        entry.deviceFingerprint = fingerprint
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
        unindex(entry)
        return entry
    }

    /// Removes the entries of accounts no longer known.
    public mutating func retainAccounts(_ accounts: Set<AccountID>) -> [NearbyEntry] {
        let gone = entries.values.filter { !accounts.contains($0.account) }.map(\.id)
        return gone.compactMap { remove($0) }
    }

    private func touch(
        _ entry: inout NearbyEntry, rssi: Double?, device: String?, wallClock: Date, now: ContinuousClock.Instant
    ) {
        Self.touch(&entry, rssi: rssi, device: device, wallClock: wallClock, expires: now + expiry, smoothing: rssiSmoothing)
    }

    private static func touch(
        _ entry: inout NearbyEntry, rssi: Double?, device: String?, wallClock: Date, expires: ContinuousClock.Instant,
        smoothing rssiSmoothing: Double
    ) {
        entry.lastSeen = wallClock
        entry.expires = expires
        if let device, device != entry.device { entry.device = device }
        if let rssi {
            entry.rssi = entry.rssi.map { $0 + rssiSmoothing * (rssi - $0) } ?? rssi
        }
    }

    /// An entry of the same account and type from the epoch just before, not yet
    /// taken over by another origin of this epoch; one with the same flags first,
    /// then the one heard last. Flags may differ: an update that reaches the air
    /// right after a rotation is first heard under the new identity.
    private func predecessor(of beacon: RecognizedBeacon) -> String? {
        // Through the index: this runs for every beacon of a new origin, and only
        // entries of the epoch just before can be its predecessor.
        let lineage = Lineage(account: beacon.account, typeHash: beacon.typeHash, epoch: beacon.epoch.advanced(by: -1))
        guard let ids = byLineage[lineage] else { return nil }
        var best: (id: String, sameFlags: Bool, lastSeen: Date)?
        for id in ids {
            guard let entry = entries[id], entry.origin.epoch.distance(to: beacon.epoch) == 1 else { continue }
            let sameFlags = entry.flags == beacon.flags
            if let current = best,
                current.sameFlags != sameFlags ? current.sameFlags : current.lastSeen >= entry.lastSeen
            {
                continue
            }
            best = (entry.id, sameFlags, entry.lastSeen)
        }
        return best?.id
    }

    private mutating func index(_ entry: NearbyEntry) {
        byLineage[Lineage(entry), default: []].insert(entry.id)
    }

    private mutating func unindex(_ entry: NearbyEntry) {
        let lineage = Lineage(entry)
        byLineage[lineage]?.remove(entry.id)
        if byLineage[lineage]?.isEmpty == true { byLineage[lineage] = nil }
    }

    /// Whether `sequence` is ahead of `newest` in 16-bit serial arithmetic, as the
    /// recognizer's replay window counts (1 ≤ d ≤ 2¹⁵ − 1).
    static func isAhead(_ sequence: UInt16, of newest: UInt16) -> Bool {
        let distance = sequence &- newest
        return distance != 0 && distance < 0x8000
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
        let hex = String(mixed, radix: 16)
        return String(repeating: "0", count: 8 - hex.count) + hex
    }
}

extension NearbyRegistry.Change {
    /// The entry, as it is after the change.
    public var entry: NearbyEntry {
        switch self {
        case .appeared(let entry), .updated(let entry), .refreshed(let entry), .copy(let entry, _): entry
        }
    }
}
