/// An open-addressing hash table from a 4-byte recognition tag to the
/// (account, epoch offset, slot) entries that produce it.
///
/// Tags are HMAC outputs, uniformly distributed and unknown to an attacker,
/// so the low bits index the table directly. Several entries may share a tag
/// (two accounts' tags can collide); lookups return all of them. The load
/// factor stays at or below 1/2, so a miss inspects about 1.5 slots.
struct RecognitionTable: Sendable {
    /// An entry's packed value: `account << 8 | epochOffsetIndex << 3 | slot`.
    struct Entry: Sendable, Equatable {
        let packed: UInt32

        init(account: Int, epochOffsetIndex: Int, slot: Int) {
            precondition(account < 1 << 23 && epochOffsetIndex < 32 && slot < 8)
            packed = UInt32(account) << 8 | UInt32(epochOffsetIndex) << 3 | UInt32(slot)
        }

        var account: Int { Int(packed >> 8) }
        var epochOffsetIndex: Int { Int(packed >> 3 & 0x1f) }
        var slot: UInt8 { UInt8(packed & 0x7) }
    }

    /// Buckets: `tag << 32 | (packed + 1)`, or 0 when empty. Tag and entry
    /// share one word so that a probe touches one cache line.
    private var buckets: [UInt64]
    private var mask: Int
    private(set) var count = 0

    /// An empty table with room for `capacity` entries.
    init(capacity: Int = 0) {
        var size = 16
        while size < capacity * 2 { size *= 2 }
        buckets = [UInt64](repeating: 0, count: size)
        mask = size - 1
    }

    /// Adds an entry (duplicates allowed).
    mutating func insert(tag: UInt32, entry: Entry) {
        if (count + 1) * 2 > buckets.count { grow() }
        var index = Int(tag) & mask
        while buckets[index] != 0 { index = (index + 1) & mask }
        buckets[index] = UInt64(tag) << 32 | UInt64(entry.packed + 1)
        count += 1
    }

    /// Calls `body` with each entry stored under `tag` until it returns false.
    @inline(__always)
    func forEach(tag: UInt32, _ body: (Entry) -> Bool) {
        buckets.withUnsafeBufferPointer { buckets in
            var index = Int(tag) & mask
            while true {
                let bucket = buckets[index]
                if bucket == 0 { return }
                if UInt32(truncatingIfNeeded: bucket >> 32) == tag,
                    !body(Entry(packed: UInt32(truncatingIfNeeded: bucket) - 1))
                {
                    return
                }
                index = (index + 1) & mask
            }
        }
    }

    private mutating func grow() {
        let old = buckets
        buckets = [UInt64](repeating: 0, count: old.count * 2)
        mask = buckets.count - 1
        count = 0
        for bucket in old where bucket != 0 {
            insert(tag: UInt32(truncatingIfNeeded: bucket >> 32), entry: Entry(packed: UInt32(truncatingIfNeeded: bucket) - 1))
        }
    }
}

extension RecognitionTable.Entry {
    fileprivate init(packed: UInt32) {
        self.packed = packed
    }
}
