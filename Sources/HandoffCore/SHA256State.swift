// SHA-256 (FIPS 180-4) for the beacon hot path.
//
// swift-crypto's SHA256 and HMAC allocate a context object per use, which
// costs more than the hashing itself for the one-block messages a beacon
// needs. This implementation works on a fixed-size value type, never
// allocates, and lets HMAC keep its ipad/opad midstates precomputed. Its
// output is checked against known-answer vectors and against swift-crypto's
// HKDF in the tests.

/// The eight-word chaining state of SHA-256.
struct SHA256State: Sendable, Equatable {
    var a: UInt32, b: UInt32, c: UInt32, d: UInt32
    var e: UInt32, f: UInt32, g: UInt32, h: UInt32

    /// The initial hash value H(0) of FIPS 180-4, section 5.3.3.
    static let initial = SHA256State(
        a: 0x6a09_e667, b: 0xbb67_ae85, c: 0x3c6e_f372, d: 0xa54f_f53a,
        e: 0x510e_527f, f: 0x9b05_688c, g: 0x1f83_d9ab, h: 0x5be0_cd19
    )

    /// Hashes `message` after `prefixLength` bytes (a multiple of 64) were
    /// already absorbed into `self`, and returns the final state (the digest).
    func finishing(_ message: UnsafeRawBufferPointer, prefixLength: Int) -> SHA256State {
        var state = self
        let fullBlocks = message.count / 64
        for index in 0..<fullBlocks {
            state.compress(bytes: message.baseAddress! + index * 64)
        }
        let tail = message.count - fullBlocks * 64
        let bitLength = UInt64(prefixLength + message.count) &* 8
        withUnsafeTemporaryAllocation(byteCount: 128, alignment: 8) { buffer in
            buffer.initializeMemory(as: UInt8.self, repeating: 0)
            if tail > 0 {
                buffer.baseAddress!.copyMemory(from: message.baseAddress! + fullBlocks * 64, byteCount: tail)
            }
            buffer[tail] = 0x80
            let blocks = tail < 56 ? 1 : 2
            buffer.storeBytes(of: bitLength.bigEndian, toByteOffset: blocks * 64 - 8, as: UInt64.self)
            for index in 0..<blocks {
                state.compress(bytes: UnsafeRawPointer(buffer.baseAddress!) + index * 64)
            }
        }
        return state
    }

    /// SHA-256 of `bytes`.
    static func digest(_ bytes: UnsafeRawBufferPointer) -> SHA256State {
        initial.finishing(bytes, prefixLength: 0)
    }

    /// The digest as 32 big-endian bytes.
    var bytes: [UInt8] {
        var out = [UInt8]()
        out.reserveCapacity(32)
        for word in [a, b, c, d, e, f, g, h] {
            out.append(UInt8(truncatingIfNeeded: word >> 24))
            out.append(UInt8(truncatingIfNeeded: word >> 16))
            out.append(UInt8(truncatingIfNeeded: word >> 8))
            out.append(UInt8(truncatingIfNeeded: word))
        }
        return out
    }

    /// Processes one 64-byte block read from `bytes` (big-endian words).
    mutating func compress(bytes: UnsafeRawPointer) {
        @inline(__always) func word(_ index: Int) -> UInt32 {
            UInt32(bigEndian: bytes.loadUnaligned(fromByteOffset: index &* 4, as: UInt32.self))
        }
        compress(
            word(0), word(1), word(2), word(3), word(4), word(5), word(6), word(7),
            word(8), word(9), word(10), word(11), word(12), word(13), word(14), word(15)
        )
    }

    /// Processes one block given as sixteen message words, unrolled per FIPS 180-4 section 6.2.2.
    mutating func compress(
        _ m0: UInt32, _ m1: UInt32, _ m2: UInt32, _ m3: UInt32,
        _ m4: UInt32, _ m5: UInt32, _ m6: UInt32, _ m7: UInt32,
        _ m8: UInt32, _ m9: UInt32, _ m10: UInt32, _ m11: UInt32,
        _ m12: UInt32, _ m13: UInt32, _ m14: UInt32, _ m15: UInt32
    ) {
        var w0 = m0, w1 = m1, w2 = m2, w3 = m3, w4 = m4, w5 = m5, w6 = m6, w7 = m7
        var w8 = m8, w9 = m9, w10 = m10, w11 = m11, w12 = m12, w13 = m13, w14 = m14, w15 = m15
        var a = self.a, b = self.b, c = self.c, d = self.d
        var e = self.e, f = self.f, g = self.g, h = self.h
        sha256Round(a, b, c, &d, e, f, g, &h, 0x428a2f98, w0)
        sha256Round(h, a, b, &c, d, e, f, &g, 0x71374491, w1)
        sha256Round(g, h, a, &b, c, d, e, &f, 0xb5c0fbcf, w2)
        sha256Round(f, g, h, &a, b, c, d, &e, 0xe9b5dba5, w3)
        sha256Round(e, f, g, &h, a, b, c, &d, 0x3956c25b, w4)
        sha256Round(d, e, f, &g, h, a, b, &c, 0x59f111f1, w5)
        sha256Round(c, d, e, &f, g, h, a, &b, 0x923f82a4, w6)
        sha256Round(b, c, d, &e, f, g, h, &a, 0xab1c5ed5, w7)
        sha256Round(a, b, c, &d, e, f, g, &h, 0xd807aa98, w8)
        sha256Round(h, a, b, &c, d, e, f, &g, 0x12835b01, w9)
        sha256Round(g, h, a, &b, c, d, e, &f, 0x243185be, w10)
        sha256Round(f, g, h, &a, b, c, d, &e, 0x550c7dc3, w11)
        sha256Round(e, f, g, &h, a, b, c, &d, 0x72be5d74, w12)
        sha256Round(d, e, f, &g, h, a, b, &c, 0x80deb1fe, w13)
        sha256Round(c, d, e, &f, g, h, a, &b, 0x9bdc06a7, w14)
        sha256Round(b, c, d, &e, f, g, h, &a, 0xc19bf174, w15)
        sha256Schedule(&w0, w1, w9, w14); sha256Round(a, b, c, &d, e, f, g, &h, 0xe49b69c1, w0)
        sha256Schedule(&w1, w2, w10, w15); sha256Round(h, a, b, &c, d, e, f, &g, 0xefbe4786, w1)
        sha256Schedule(&w2, w3, w11, w0); sha256Round(g, h, a, &b, c, d, e, &f, 0x0fc19dc6, w2)
        sha256Schedule(&w3, w4, w12, w1); sha256Round(f, g, h, &a, b, c, d, &e, 0x240ca1cc, w3)
        sha256Schedule(&w4, w5, w13, w2); sha256Round(e, f, g, &h, a, b, c, &d, 0x2de92c6f, w4)
        sha256Schedule(&w5, w6, w14, w3); sha256Round(d, e, f, &g, h, a, b, &c, 0x4a7484aa, w5)
        sha256Schedule(&w6, w7, w15, w4); sha256Round(c, d, e, &f, g, h, a, &b, 0x5cb0a9dc, w6)
        sha256Schedule(&w7, w8, w0, w5); sha256Round(b, c, d, &e, f, g, h, &a, 0x76f988da, w7)
        sha256Schedule(&w8, w9, w1, w6); sha256Round(a, b, c, &d, e, f, g, &h, 0x983e5152, w8)
        sha256Schedule(&w9, w10, w2, w7); sha256Round(h, a, b, &c, d, e, f, &g, 0xa831c66d, w9)
        sha256Schedule(&w10, w11, w3, w8); sha256Round(g, h, a, &b, c, d, e, &f, 0xb00327c8, w10)
        sha256Schedule(&w11, w12, w4, w9); sha256Round(f, g, h, &a, b, c, d, &e, 0xbf597fc7, w11)
        sha256Schedule(&w12, w13, w5, w10); sha256Round(e, f, g, &h, a, b, c, &d, 0xc6e00bf3, w12)
        sha256Schedule(&w13, w14, w6, w11); sha256Round(d, e, f, &g, h, a, b, &c, 0xd5a79147, w13)
        sha256Schedule(&w14, w15, w7, w12); sha256Round(c, d, e, &f, g, h, a, &b, 0x06ca6351, w14)
        sha256Schedule(&w15, w0, w8, w13); sha256Round(b, c, d, &e, f, g, h, &a, 0x14292967, w15)
        sha256Schedule(&w0, w1, w9, w14); sha256Round(a, b, c, &d, e, f, g, &h, 0x27b70a85, w0)
        sha256Schedule(&w1, w2, w10, w15); sha256Round(h, a, b, &c, d, e, f, &g, 0x2e1b2138, w1)
        sha256Schedule(&w2, w3, w11, w0); sha256Round(g, h, a, &b, c, d, e, &f, 0x4d2c6dfc, w2)
        sha256Schedule(&w3, w4, w12, w1); sha256Round(f, g, h, &a, b, c, d, &e, 0x53380d13, w3)
        sha256Schedule(&w4, w5, w13, w2); sha256Round(e, f, g, &h, a, b, c, &d, 0x650a7354, w4)
        sha256Schedule(&w5, w6, w14, w3); sha256Round(d, e, f, &g, h, a, b, &c, 0x766a0abb, w5)
        sha256Schedule(&w6, w7, w15, w4); sha256Round(c, d, e, &f, g, h, a, &b, 0x81c2c92e, w6)
        sha256Schedule(&w7, w8, w0, w5); sha256Round(b, c, d, &e, f, g, h, &a, 0x92722c85, w7)
        sha256Schedule(&w8, w9, w1, w6); sha256Round(a, b, c, &d, e, f, g, &h, 0xa2bfe8a1, w8)
        sha256Schedule(&w9, w10, w2, w7); sha256Round(h, a, b, &c, d, e, f, &g, 0xa81a664b, w9)
        sha256Schedule(&w10, w11, w3, w8); sha256Round(g, h, a, &b, c, d, e, &f, 0xc24b8b70, w10)
        sha256Schedule(&w11, w12, w4, w9); sha256Round(f, g, h, &a, b, c, d, &e, 0xc76c51a3, w11)
        sha256Schedule(&w12, w13, w5, w10); sha256Round(e, f, g, &h, a, b, c, &d, 0xd192e819, w12)
        sha256Schedule(&w13, w14, w6, w11); sha256Round(d, e, f, &g, h, a, b, &c, 0xd6990624, w13)
        sha256Schedule(&w14, w15, w7, w12); sha256Round(c, d, e, &f, g, h, a, &b, 0xf40e3585, w14)
        sha256Schedule(&w15, w0, w8, w13); sha256Round(b, c, d, &e, f, g, h, &a, 0x106aa070, w15)
        sha256Schedule(&w0, w1, w9, w14); sha256Round(a, b, c, &d, e, f, g, &h, 0x19a4c116, w0)
        sha256Schedule(&w1, w2, w10, w15); sha256Round(h, a, b, &c, d, e, f, &g, 0x1e376c08, w1)
        sha256Schedule(&w2, w3, w11, w0); sha256Round(g, h, a, &b, c, d, e, &f, 0x2748774c, w2)
        sha256Schedule(&w3, w4, w12, w1); sha256Round(f, g, h, &a, b, c, d, &e, 0x34b0bcb5, w3)
        sha256Schedule(&w4, w5, w13, w2); sha256Round(e, f, g, &h, a, b, c, &d, 0x391c0cb3, w4)
        sha256Schedule(&w5, w6, w14, w3); sha256Round(d, e, f, &g, h, a, b, &c, 0x4ed8aa4a, w5)
        sha256Schedule(&w6, w7, w15, w4); sha256Round(c, d, e, &f, g, h, a, &b, 0x5b9cca4f, w6)
        sha256Schedule(&w7, w8, w0, w5); sha256Round(b, c, d, &e, f, g, h, &a, 0x682e6ff3, w7)
        sha256Schedule(&w8, w9, w1, w6); sha256Round(a, b, c, &d, e, f, g, &h, 0x748f82ee, w8)
        sha256Schedule(&w9, w10, w2, w7); sha256Round(h, a, b, &c, d, e, f, &g, 0x78a5636f, w9)
        sha256Schedule(&w10, w11, w3, w8); sha256Round(g, h, a, &b, c, d, e, &f, 0x84c87814, w10)
        sha256Schedule(&w11, w12, w4, w9); sha256Round(f, g, h, &a, b, c, d, &e, 0x8cc70208, w11)
        sha256Schedule(&w12, w13, w5, w10); sha256Round(e, f, g, &h, a, b, c, &d, 0x90befffa, w12)
        sha256Schedule(&w13, w14, w6, w11); sha256Round(d, e, f, &g, h, a, b, &c, 0xa4506ceb, w13)
        sha256Schedule(&w14, w15, w7, w12); sha256Round(c, d, e, &f, g, h, a, &b, 0xbef9a3f7, w14)
        sha256Schedule(&w15, w0, w8, w13); sha256Round(b, c, d, &e, f, g, h, &a, 0xc67178f2, w15)
        self.a &+= a; self.b &+= b; self.c &+= c; self.d &+= d
        self.e &+= e; self.f &+= f; self.g &+= g; self.h &+= h
    }
}

@inline(__always)
private func rotr(_ x: UInt32, _ n: UInt32) -> UInt32 { (x >> n) | (x << (32 &- n)) }

/// One SHA-256 round: updates `d` and `h` in place; the caller rotates the names.
@inline(__always)
private func sha256Round(
    _ a: UInt32, _ b: UInt32, _ c: UInt32, _ d: inout UInt32,
    _ e: UInt32, _ f: UInt32, _ g: UInt32, _ h: inout UInt32,
    _ k: UInt32, _ w: UInt32
) {
    let t1 = h &+ (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) &+ (g ^ (e & (f ^ g))) &+ k &+ w
    d = d &+ t1
    h = t1 &+ (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) &+ ((a & b) | (c & (a | b)))
}

/// One message-schedule step on a sixteen-word ring: W[t] = σ1(W[t-2]) + W[t-7] + σ0(W[t-15]) + W[t-16].
@inline(__always)
private func sha256Schedule(_ w0: inout UInt32, _ w1: UInt32, _ w9: UInt32, _ w14: UInt32) {
    w0 = w0 &+ (rotr(w1, 7) ^ rotr(w1, 18) ^ (w1 >> 3)) &+ w9
        &+ (rotr(w14, 17) ^ rotr(w14, 19) ^ (w14 >> 10))
}
