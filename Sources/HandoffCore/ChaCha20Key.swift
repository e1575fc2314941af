/// A 256-bit ChaCha20 key (RFC 8439) and its block function.
///
/// The beacon uses one ChaCha20 block per beacon as a keyed pseudo-random
/// stream: 11 of its bytes encrypt the beacon's secret fields. The block
/// function is checked against the RFC 8439 test vector and against the
/// independently generated beacon vectors in the tests.
struct ChaCha20Key: Sendable, Equatable {
    /// The key as eight little-endian words.
    var words: (UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32)

    /// Reads a 32-byte key.
    init(bytes: some Collection<UInt8>) {
        precondition(bytes.count == 32, "a ChaCha20 key has 32 bytes")
        let array = Array(bytes)
        func word(_ index: Int) -> UInt32 {
            UInt32(array[index * 4]) | UInt32(array[index * 4 + 1]) << 8
                | UInt32(array[index * 4 + 2]) << 16 | UInt32(array[index * 4 + 3]) << 24
        }
        words = (word(0), word(1), word(2), word(3), word(4), word(5), word(6), word(7))
    }

    static func == (lhs: ChaCha20Key, rhs: ChaCha20Key) -> Bool {
        lhs.words.0 == rhs.words.0 && lhs.words.1 == rhs.words.1 && lhs.words.2 == rhs.words.2
            && lhs.words.3 == rhs.words.3 && lhs.words.4 == rhs.words.4 && lhs.words.5 == rhs.words.5
            && lhs.words.6 == rhs.words.6 && lhs.words.7 == rhs.words.7
    }

    /// The 64-byte block for `counter` and the 96-bit nonce given as three
    /// little-endian words, serialized little-endian into `output`.
    func block(
        counter: UInt32, nonce: (UInt32, UInt32, UInt32), into output: UnsafeMutableRawBufferPointer
    ) {
        precondition(output.count >= 64)
        let s = chachaBlock(counter: counter, nonce: nonce)
        let words = [
            s.0, s.1, s.2, s.3, s.4, s.5, s.6, s.7, s.8, s.9, s.10, s.11, s.12, s.13, s.14, s.15,
        ]
        for (index, word) in words.enumerated() {
            output.storeBytes(of: word.littleEndian, toByteOffset: index * 4, as: UInt32.self)
        }
    }

    /// The first three output words of the block: the only ones the beacon needs (11 bytes).
    @inline(__always)
    func firstWords(counter: UInt32, nonce: (UInt32, UInt32, UInt32)) -> (UInt32, UInt32, UInt32) {
        let s = chachaBlock(counter: counter, nonce: nonce)
        return (s.0, s.1, s.2)
    }

    // The ChaCha20 block function of RFC 8439, section 2.3.
    @inline(__always)
    private func chachaBlock(counter: UInt32, nonce: (UInt32, UInt32, UInt32)) -> (
        UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32,
        UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32, UInt32
    ) {
        let c0: UInt32 = 0x6170_7865, c1: UInt32 = 0x3320_646e, c2: UInt32 = 0x7962_2d32, c3: UInt32 = 0x6b20_6574
        var x0 = c0, x1 = c1, x2 = c2, x3 = c3
        var x4 = words.0, x5 = words.1, x6 = words.2, x7 = words.3
        var x8 = words.4, x9 = words.5, x10 = words.6, x11 = words.7
        var x12 = counter, x13 = nonce.0, x14 = nonce.1, x15 = nonce.2
        for _ in 0..<10 {
            quarterRound(&x0, &x4, &x8, &x12)
            quarterRound(&x1, &x5, &x9, &x13)
            quarterRound(&x2, &x6, &x10, &x14)
            quarterRound(&x3, &x7, &x11, &x15)
            quarterRound(&x0, &x5, &x10, &x15)
            quarterRound(&x1, &x6, &x11, &x12)
            quarterRound(&x2, &x7, &x8, &x13)
            quarterRound(&x3, &x4, &x9, &x14)
        }
        return (
            x0 &+ c0, x1 &+ c1, x2 &+ c2, x3 &+ c3,
            x4 &+ words.0, x5 &+ words.1, x6 &+ words.2, x7 &+ words.3,
            x8 &+ words.4, x9 &+ words.5, x10 &+ words.6, x11 &+ words.7,
            x12 &+ counter, x13 &+ nonce.0, x14 &+ nonce.1, x15 &+ nonce.2
        )
    }
}

@inline(__always)
private func rotl(_ x: UInt32, _ n: UInt32) -> UInt32 { (x << n) | (x >> (32 &- n)) }

@inline(__always)
private func quarterRound(_ a: inout UInt32, _ b: inout UInt32, _ c: inout UInt32, _ d: inout UInt32) {
    a = a &+ b; d = rotl(d ^ a, 16)
    c = c &+ d; b = rotl(b ^ c, 12)
    a = a &+ b; d = rotl(d ^ a, 8)
    c = c &+ d; b = rotl(b ^ c, 7)
}
