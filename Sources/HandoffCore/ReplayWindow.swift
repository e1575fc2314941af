/// Remembers which sequence numbers each beacon origin has used, and
/// rejects repeats.
///
/// Per origin (account, epoch, device) it keeps the newest sequence number and
/// a 64-bit bitmap of the ones just before it, compared in 16-bit serial
/// arithmetic (so the random start and wrap-around are fine). With
/// d = (sequence − newest) mod 2¹⁶: 1 ≤ d ≤ 2¹⁵ − 1 is ahead by d (accepted,
/// becomes the newest); otherwise, including d = 2¹⁵ exactly, it is behind by
/// 2¹⁶ − d (or 0), accepted once if less than 64 behind, refused if 64 or more.
/// Only authenticated beacons reach it, so strangers cannot fill it.
public struct ReplayWindow: Sendable {
    /// How far behind the newest accepted number a late one may still be accepted.
    public static let width = 64
    /// Default maximum number of origins remembered.
    public static let defaultCapacity = 4096

    private struct Entry: Sendable {
        var newest: UInt16
        /// Bit i set: sequence `newest - i` was accepted.
        var seen: UInt64
        var lastUpdate: UInt64
    }

    /// Maximum number of origins remembered; past it the least recently
    /// updated origin is forgotten.
    public let capacity: Int
    private var entries: [BeaconOrigin: Entry] = [:]
    private var clock: UInt64 = 0

    /// An empty window.
    public init(capacity: Int = ReplayWindow.defaultCapacity) {
        precondition(capacity > 0)
        self.capacity = capacity
    }

    /// Number of origins remembered.
    public var count: Int { entries.count }

    /// Whether `sequence` from `origin` would be refused.
    public func wouldReject(_ origin: BeaconOrigin, sequence: UInt16) -> Bool {
        guard let entry = entries[origin] else { return false }
        let ahead = Int16(bitPattern: sequence &- entry.newest)
        if ahead > 0 { return false }
        let behind = -Int(ahead)
        return behind >= Self.width || entry.seen & (1 << UInt64(behind)) != 0
    }

    /// Records `sequence` from `origin`; returns false (and records nothing)
    /// if it was already accepted or is too old.
    public mutating func accept(_ origin: BeaconOrigin, sequence: UInt16) -> Bool {
        clock &+= 1
        guard let index = entries.index(forKey: origin) else {
            if entries.count >= capacity { evictOldest() }
            entries[origin] = Entry(newest: sequence, seen: 1, lastUpdate: clock)
            return true
        }
        // Update in place: one hash lookup for an origin seen before.
        return Self.accept(sequence, into: &entries.values[index], clock: clock)
    }

    private static func accept(_ sequence: UInt16, into entry: inout Entry, clock: UInt64) -> Bool {
        let ahead = Int16(bitPattern: sequence &- entry.newest)
        if ahead > 0 {
            entry.seen = ahead >= width ? 1 : entry.seen << UInt64(ahead) | 1
            entry.newest = sequence
        } else {
            let behind = -Int(ahead)
            let bit: UInt64 = behind < width ? 1 << UInt64(behind) : 0
            guard bit != 0, entry.seen & bit == 0 else { return false }
            entry.seen |= bit
        }
        entry.lastUpdate = clock
        return true
    }

    /// Forgets every origin whose epoch is not in `epochs` (same epoch length assumed).
    public mutating func retain(epochs: ClosedRange<UInt64>) {
        entries = entries.filter { epochs.contains($0.key.epoch.index) }
    }

    /// Forgets everything.
    public mutating func removeAll() {
        entries.removeAll()
    }

    private mutating func evictOldest() {
        if let oldest = entries.min(by: { $0.value.lastUpdate < $1.value.lastUpdate })?.key {
            entries[oldest] = nil
        }
    }
}
