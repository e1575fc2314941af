/// Remembers what the last authenticated payloads opened to, so that a
/// beacon heard again costs one comparison instead of a MAC and a decryption.
///
/// BLE repeats an unchanged advertisement many times a second, so a scanner
/// hears each beacon over and over; every repeat after the first is then
/// rejected as a replay. The cache memoizes only the pure part of
/// recognition (tag lookup, MAC, decryption: bytes in, fields out, for the
/// current keys): the epoch window and replay checks still run on every hit.
///
/// It is an open-addressed table (linear probing) indexed by low bits of the
/// payload's MAC (an HMAC output, so uniform), kept at most half full: every
/// payload stored stays findable until the owner empties the cache, however
/// many devices take turns (a direct-mapped cache of 1024 slots lost 62% of
/// 1000 devices' payloads to collisions, and recomputed their MACs at every
/// repeat). It starts small and doubles as it fills, up to `maximumCapacity`
/// slots; a payload that would fill it past half at that size empties it
/// first. Only payloads whose MAC verified are stored, so a stranger cannot
/// fill it, and a hit needs all 24 bytes equal, so it never answers for a
/// payload it did not authenticate. The owner empties it whenever its keys
/// change.
struct RepeatCache: Sendable {
    /// Slots of a new cache.
    static let initialCapacity = 64
    /// The most slots a default cache grows to: 2048 payloads, in 320 KiB (80 bytes a slot). A
    /// receiver's cache holds the beacons of its accounts' devices in the epoch window; 64 slots
    /// (5 KiB) hold 32.
    static let defaultMaximumCapacity = 4096

    private struct Entry: Sendable {
        /// The 24 payload bytes as three native-endian words.
        let words: (UInt64, UInt64, UInt64)
        let fields: BeaconFields
        let account: Int
    }

    private var slots: [Entry?]
    private var mask: Int
    /// The most slots it grows to (a power of two).
    let maximumCapacity: Int
    /// Number of occupied slots.
    private(set) var count = 0

    /// An empty cache that grows to `maximumCapacity` slots (rounded up to a
    /// power of two, at least 2), holding at most half as many payloads.
    init(maximumCapacity: Int = RepeatCache.defaultMaximumCapacity) {
        let maximum = Self.powerOfTwo(atLeast: max(2, maximumCapacity))
        self.maximumCapacity = maximum
        let size = min(Self.initialCapacity, maximum)
        slots = [Entry?](repeating: nil, count: size)
        mask = size - 1
    }

    /// Slots now.
    var capacity: Int { slots.count }

    private static func powerOfTwo(atLeast value: Int) -> Int {
        var size = 1
        while size < value { size *= 2 }
        return size
    }

    @inline(__always)
    private static func words(_ p: UnsafeRawPointer) -> (UInt64, UInt64, UInt64) {
        (
            p.loadUnaligned(fromByteOffset: 0, as: UInt64.self),
            p.loadUnaligned(fromByteOffset: 8, as: UInt64.self),
            p.loadUnaligned(fromByteOffset: 16, as: UInt64.self)
        )
    }

    @inline(__always)
    private static func home(_ words: (UInt64, UInt64, UInt64), mask: Int) -> Int {
        // The third word holds bytes 16..<24; the MAC is bytes 19..<24 (BeaconFormat.macOffset), its top 40 bits.
        Int(truncatingIfNeeded: UInt64(littleEndian: words.2) >> 24) & mask
    }

    /// The fields and account index stored for the 24 bytes at `p`, if any.
    @inline(__always)
    func lookup(_ p: UnsafeRawPointer) -> (fields: BeaconFields, account: Int)? {
        let words = Self.words(p)
        var index = Self.home(words, mask: mask)
        // At most half full, so an empty slot ends every probe.
        while let entry = slots[index] {
            if entry.words.0 == words.0, entry.words.1 == words.1, entry.words.2 == words.2 {
                return (entry.fields, entry.account)
            }
            index = (index + 1) & mask
        }
        return nil
    }

    /// Stores what the authenticated 24 bytes at `p` opened to (replacing what
    /// was stored for the same bytes).
    mutating func insert(_ p: UnsafeRawPointer, fields: BeaconFields, account: Int) {
        let words = Self.words(p)
        if (count + 1) * 2 > slots.count {
            if slots.count < maximumCapacity { grow() } else { removeAll() }
        }
        var index = Self.home(words, mask: mask)
        while let entry = slots[index] {
            if entry.words.0 == words.0, entry.words.1 == words.1, entry.words.2 == words.2 { break }
            index = (index + 1) & mask
        }
        if slots[index] == nil { count += 1 }
        slots[index] = Entry(words: words, fields: fields, account: account)
    }

    /// Doubles the slots, placing every entry anew.
    private mutating func grow() {
        let old = slots
        slots = [Entry?](repeating: nil, count: old.count * 2)
        mask = slots.count - 1
        for case let entry? in old {
            var index = Self.home(entry.words, mask: mask)
            while slots[index] != nil { index = (index + 1) & mask }
            slots[index] = entry
        }
    }

    /// Forgets everything (the keys changed), keeping the slots it has.
    mutating func removeAll() {
        guard count > 0 else { return }
        for index in slots.indices { slots[index] = nil }
        count = 0
    }
}
