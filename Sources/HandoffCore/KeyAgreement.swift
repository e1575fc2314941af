import Crypto

/// X25519, HKDF and HMAC over `SecretBytes`, shared by pairing (docs/pairing.md) and
/// rekeys (docs/devices.md, section 7). Secrets stay in `SecretBytes`.
enum KeyAgreement {
    /// `X25519(privateKey, peer)`; nil for a peer key that is not 32 bytes or whose
    /// result is all zeros (a low-order point).
    static func sharedSecret(_ privateKey: SecretBytes, _ peer: [UInt8]) -> SecretBytes? {
        guard let peerKey = try? Curve25519.KeyAgreement.PublicKey(rawRepresentation: peer),
            let shared = try? privateKey.withUnsafeBytes({ raw in
                try Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw).sharedSecretFromKeyAgreement(with: peerKey)
            })
        else { return nil }
        let bytes = shared.withUnsafeBytes { SecretBytes($0) }
        let allZero = bytes.withUnsafeBytes { $0.reduce(UInt8(0)) { $0 | $1 } == 0 }
        return allZero ? nil : bytes
    }

    /// `HKDF-SHA256(IKM = ikm, salt, info, L = 32)`.
    static func derive(_ ikm: SecretBytes, salt: [UInt8], info: [UInt8]) -> SecretBytes {
        let key = ikm.withUnsafeBytes { raw in
            HKDF<SHA256>.deriveKey(inputKeyMaterial: SymmetricKey(data: raw), salt: salt, info: info, outputByteCount: 32)
        }
        return key.withUnsafeBytes { SecretBytes($0) }
    }

    /// `HMAC-SHA256(key, message)`.
    static func hmac(key: SecretBytes, _ message: [UInt8]) -> [UInt8] {
        key.withUnsafeBytes { Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: $0))) }
    }

    /// Constant-time equality of two byte strings of public length.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        var difference: UInt8 = 0
        for index in a.indices { difference |= a[index] ^ b[index] }
        return difference == 0
    }
}
