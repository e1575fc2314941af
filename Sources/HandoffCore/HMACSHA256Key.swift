/// An HMAC-SHA256 key (RFC 2104) with its inner and outer midstates precomputed.
///
/// Authenticating a message of up to 55 bytes then costs exactly two SHA-256
/// compressions and no allocation, which is what makes beacon recognition fast.
struct HMACSHA256Key: Sendable {
    /// State after absorbing `key XOR ipad`.
    let inner: SHA256State
    /// State after absorbing `key XOR opad`.
    let outer: SHA256State

    /// Prepares `key`; keys longer than the 64-byte block are hashed first, as RFC 2104 says.
    init(key: some Collection<UInt8>) {
        var block = [UInt8](repeating: 0, count: 64)
        if key.count > 64 {
            let hashed = Array(key).withUnsafeBytes { SHA256State.digest($0) }.bytes
            block.replaceSubrange(0..<32, with: hashed)
        } else {
            block.replaceSubrange(0..<key.count, with: key)
        }
        var inner = SHA256State.initial
        var outer = SHA256State.initial
        let ipad = block.map { $0 ^ 0x36 }
        let opad = block.map { $0 ^ 0x5c }
        ipad.withUnsafeBytes { inner.compress(bytes: $0.baseAddress!) }
        opad.withUnsafeBytes { outer.compress(bytes: $0.baseAddress!) }
        for index in block.indices { block[index] = 0 }
        self.inner = inner
        self.outer = outer
    }

    /// HMAC-SHA256 of `message` as a digest state (call `.bytes` for the 32 bytes).
    func authenticate(_ message: UnsafeRawBufferPointer) -> SHA256State {
        let innerDigest = inner.finishing(message, prefixLength: 64)
        var state = outer
        // One block: the 32-byte inner digest, the 0x80 pad byte, zeros, and the
        // bit length of opad block + digest = 96 bytes = 768 bits.
        state.compress(
            innerDigest.a, innerDigest.b, innerDigest.c, innerDigest.d,
            innerDigest.e, innerDigest.f, innerDigest.g, innerDigest.h,
            0x8000_0000, 0, 0, 0, 0, 0, 0, 768
        )
        return state
    }

    /// HMAC-SHA256 of `message`, all 32 bytes.
    func authenticate(_ message: some Collection<UInt8>) -> [UInt8] {
        if let digest = message.withContiguousStorageIfAvailable({ authenticate(UnsafeRawBufferPointer($0)) }) {
            return digest.bytes
        }
        return Array(message).withUnsafeBytes { authenticate($0) }.bytes
    }
}
