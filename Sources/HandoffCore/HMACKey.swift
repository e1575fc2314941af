import Crypto

/// An HMAC-SHA256 key, prepared once with swift-crypto's `HMAC<SHA256>`.
///
/// `HMAC<SHA256>(key:)` absorbs the padded key into the inner and outer
/// SHA-256 states. This type keeps that prepared value and, per message,
/// copies it and feeds the copy: the key pads are derived once per key, not
/// once per message.
///
/// `@unchecked Sendable` is sound because the stored `HMAC<SHA256>` is never
/// mutated. It is a value type whose SHA-256 contexts are copy-on-write
/// objects; `authenticationCode(for:)` mutates only a local copy, whose first
/// update allocates a context of its own because the stored one is still
/// referenced (by `self`). Threads sharing a key therefore only ever read the
/// shared contexts. swift-crypto does not mark `HMAC` `Sendable` on Linux.
struct HMACKey: @unchecked Sendable {
    private let prepared: HMAC<SHA256>

    /// Prepares `key`.
    init(key: SymmetricKey) {
        prepared = HMAC<SHA256>(key: key)
    }

    /// Prepares the key given by `bytes`.
    init(bytes: [UInt8]) {
        self.init(key: SymmetricKey(data: bytes))
    }

    /// HMAC-SHA256 of `message`.
    @inline(__always)
    func authenticationCode(for message: UnsafeRawBufferPointer) -> HashedAuthenticationCode<SHA256> {
        var hmac = prepared
        hmac.update(data: message)
        return hmac.finalize()
    }

    /// HMAC-SHA256 of `message`, all 32 bytes.
    func authenticationCode(for message: some Sequence<UInt8>) -> [UInt8] {
        let bytes = Array(message)
        return bytes.withUnsafeBytes { Array(authenticationCode(for: $0)) }
    }

    /// The first 4 bytes of HMAC-SHA256 of `message`, big-endian.
    @inline(__always)
    func prefixWord(of message: UnsafeRawBufferPointer) -> UInt32 {
        authenticationCode(for: message).withUnsafeBytes { UInt32(bigEndian: $0.loadUnaligned(as: UInt32.self)) }
    }
}
