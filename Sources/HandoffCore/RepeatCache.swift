/// Remembers what the last authenticated payloads opened to, so that a
/// beacon heard again costs one comparison instead of a MAC and a decryption.
///
/// BLE repeats an unchanged advertisement many times a second, so a scanner
/// hears each beacon over and over; every repeat after the first is then
/// rejected as a replay. The cache memoizes only the pure part of
/// recognition (tag lookup, MAC, decryption: bytes in, fields out, for the
/// current keys): the epoch window and replay checks still run on every hit.
///
/// It is direct-mapped: `capacity` slots, indexed by low bits of the
/// payload's MAC (an HMAC output, so uniform); a payload mapping to an
/// occupied slot replaces the entry there. Only payloads whose MAC verified
/// are stored, so a stranger cannot fill it, and a hit needs all 24 bytes
/// equal, so it never answers for a payload it did not authenticate. The
/// owner empties it whenever its keys change.
struct RepeatCache: Sendable {
    /// Number of slots of a default cache.
    static let defaultCapacity = 1024

    private struct Entry: Sendable {
        /// The 24 payload bytes as three native-endian words.
        let words: (UInt64, UInt64, UInt64)
        let fields: BeaconFields
        let account: Int
    }

    private var slots: [Entry?]
    private let mask: Int
    /// Number of occupied slots.
    private(set) var count = 0

    /// An empty cache with `capacity` slots (rounded up to a power of two).
    init(capacity: Int = RepeatCache.defaultCapacity) {
        var size = 1
        while size < capacity { size *= 2 }
        slots = [Entry?](repeating: nil, count: size)
        mask = size - 1
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
    private func slot(_ p: UnsafeRawPointer) -> Int {
        Int(p.loadUnaligned(fromByteOffset: BeaconFormat.macOffset, as: UInt32.self)) & mask
    }

    /// The fields and account index stored for the 24 bytes at `p`, if any.
    @inline(__always)
    func lookup(_ p: UnsafeRawPointer) -> (fields: BeaconFields, account: Int)? {
        guard let entry = slots[slot(p)] else { return nil }
        let words = Self.words(p)
        guard entry.words.0 == words.0, entry.words.1 == words.1, entry.words.2 == words.2 else { return nil }
        return (entry.fields, entry.account)
    }

    /// Stores what the authenticated 24 bytes at `p` opened to.
    @inline(__always)
    mutating func insert(_ p: UnsafeRawPointer, fields: BeaconFields, account: Int) {
        let index = slot(p)
        if slots[index] == nil { count += 1 }
        slots[index] = Entry(words: Self.words(p), fields: fields, account: account)
    }

    /// Forgets everything (the keys changed).
    mutating func removeAll() {
        guard count > 0 else { return }
        for index in slots.indices { slots[index] = nil }
        count = 0
    }
}
