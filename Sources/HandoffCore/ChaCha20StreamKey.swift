import Crypto
import _CryptoExtras

/// A 256-bit ChaCha20 key (RFC 8439), used through swift-crypto's
/// `Insecure.ChaCha20CTR` as the keystream that encrypts a beacon's 11 secret bytes.
///
/// The beacon's nonce is its first 8 bytes (header, tag, salt) followed by
/// four zero bytes, and the block counter is 0 (docs/beacon-format.md,
/// "Sealing"). `ChaCha20CTR` is "insecure" in swift-crypto's sense because it
/// is unauthenticated; the beacon authenticates every byte with its own MAC.
///
/// `@unchecked Sendable` is sound: a `SymmetricKey` is immutable (swift-crypto
/// does not mark it `Sendable` on Linux).
struct ChaCha20StreamKey: @unchecked Sendable {
    /// Length of the nonce that `ChaCha20CTR` takes: 12 bytes.
    static let nonceLength = 12

    private let key: SymmetricKey

    /// Uses `key`, which must be 32 bytes.
    init(key: SymmetricKey) {
        precondition(key.bitCount == 256, "a ChaCha20 key has 32 bytes")
        self.key = key
    }

    /// Uses the 32 bytes `bytes`.
    init(bytes: [UInt8]) {
        self.init(key: SymmetricKey(data: bytes))
    }

    /// Whether both keys have the same bytes (for tests; not constant time).
    func hasSameBytes(as other: ChaCha20StreamKey) -> Bool {
        key.withUnsafeBytes { left in other.key.withUnsafeBytes { right in left.elementsEqual(right) } }
    }

    /// XORs the keystream for `nonce` (the 8 bytes at `nonce`, then 4 zero
    /// bytes), counter 0, into the `count` bytes at `bytes`, in place.
    @inline(__always)
    func apply(nonce: UnsafeRawPointer, to bytes: UnsafeMutableRawPointer, count: Int) {
        var nonceBytes: (UInt64, UInt32) = (nonce.loadUnaligned(as: UInt64.self), 0)
        do {
            try withUnsafeBytes(of: &nonceBytes) { nonceBuffer in
                let output = try Insecure.ChaCha20CTR.encrypt(
                    UnsafeRawBufferPointer(start: bytes, count: count), using: key,
                    nonce: Insecure.ChaCha20CTR.Nonce(data: nonceBuffer)
                )
                output.withUnsafeBytes { bytes.copyMemory(from: $0.baseAddress!, byteCount: count) }
            }
        } catch {
            // Only a key or nonce of the wrong size throws; both sizes are fixed here.
            preconditionFailure("ChaCha20CTR refused a 32-byte key and a 12-byte nonce")
        }
    }

    /// The first `count` keystream bytes for `nonce` (8 bytes; see `apply`).
    func keystream(nonce: some Collection<UInt8>, count: Int) -> [UInt8] {
        precondition(nonce.count == 8, "the beacon nonce has 8 bytes")
        let nonce = Array(nonce)
        var stream = [UInt8](repeating: 0, count: count)
        nonce.withUnsafeBytes { nonceBuffer in
            stream.withUnsafeMutableBytes { apply(nonce: nonceBuffer.baseAddress!, to: $0.baseAddress!, count: count) }
        }
        return stream
    }
}
