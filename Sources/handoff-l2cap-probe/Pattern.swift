/// xorshift64*: the same bytes on both sides for the same seed.
struct Pattern {
    private var state: UInt64
    private var word: UInt64 = 0
    private var left = 0

    init(seed: UInt64) { state = seed &* 0x9E37_79B9_7F4A_7C15 | 1 }

    mutating func next() -> UInt8 {
        if left == 0 {
            state ^= state >> 12
            state ^= state << 25
            state ^= state >> 27
            word = state &* 0x2545_F491_4F6C_DD1D
            left = 8
        }
        left -= 1
        let byte = UInt8(truncatingIfNeeded: word)
        word >>= 8
        return byte
    }
}
