import Crypto

/// A pairing attempt ended: `code` says why, `fromPeer` whether the other laptop said so in a `failed`
/// message (then there is no need to tell it).
public struct PairingError: Error, Sendable, Equatable, CustomStringConvertible {
    public let code: PairingFailure
    public let fromPeer: Bool

    public init(_ code: PairingFailure, fromPeer: Bool = false) {
        self.code = code
        self.fromPeer = fromPeer
    }

    public var description: String { fromPeer ? "the other laptop reported \(code)" : "\(code)" }
}

/// The computations of docs/pairing.md, section 4. Secrets stay in `SecretBytes`.
enum PairingCrypto {
    static func hmac(key: some Collection<UInt8>, _ message: [UInt8]) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: message, using: SymmetricKey(data: Array(key))))
    }

    static func hmac(key: SecretBytes, _ message: [UInt8]) -> [UInt8] {
        KeyAgreement.hmac(key: key, message)
    }

    /// `Co = HMAC(No, L_commit ‖ PKj ‖ PKo)`.
    static func commitment(offererNonce: [UInt8], joinerKey: [UInt8], offererKey: [UInt8]) -> [UInt8] {
        hmac(key: offererNonce, PairingFormat.commitLabel + joinerKey + offererKey)
    }

    /// `uint32(HMAC(Nj, L_number ‖ PKj ‖ PKo ‖ No)[0..<4]) mod 10^6`.
    static func number(
        joinerNonce: [UInt8], joinerKey: [UInt8], offererKey: [UInt8], offererNonce: [UInt8]
    ) -> PairingNumber {
        let mac = hmac(key: joinerNonce, PairingFormat.numberLabel + joinerKey + offererKey + offererNonce)
        let value = UInt32(mac[0]) << 24 | UInt32(mac[1]) << 16 | UInt32(mac[2]) << 8 | UInt32(mac[3])
        return PairingNumber(value: value % 1_000_000)
    }

    /// `T = SHA256(L_transcript ‖ pairingID ‖ PKj ‖ PKo ‖ Nj ‖ No)`.
    static func transcript(
        pairingID: [UInt8], joinerKey: [UInt8], offererKey: [UInt8], joinerNonce: [UInt8], offererNonce: [UInt8]
    ) -> [UInt8] {
        Array(SHA256.hash(data: PairingFormat.transcriptLabel + pairingID + joinerKey + offererKey + joinerNonce
            + offererNonce))
    }

    /// The public key of a 32-byte X25519 private key.
    static func publicKey(of privateKey: SecretBytes) -> [UInt8] {
        privateKey.withUnsafeBytes { raw in
            // 32 bytes: cannot fail.
            Array(try! Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw).publicKey.rawRepresentation)
        }
    }

    /// `DH = X25519(sk, peer)`; `malformed` for a key whose result is all zeros (a low-order point).
    static func sharedSecret(_ privateKey: SecretBytes, _ peer: [UInt8]) throws(PairingError) -> SecretBytes {
        guard let shared = KeyAgreement.sharedSecret(privateKey, peer) else { throw PairingError(.malformed) }
        return shared
    }

    /// `HKDF(IKM = DH, salt = T, info = label, L = 32)`.
    static func derive(_ shared: SecretBytes, transcript: [UInt8], label: [UInt8]) -> SecretBytes {
        KeyAgreement.derive(shared, salt: transcript, info: label)
    }

    /// Constant-time equality of two byte strings of public length.
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        KeyAgreement.equal(a, b)
    }

    /// Checks version and type; returns the body after them.
    static func body(
        of message: [UInt8], type: PairingFormat.MessageType, length: Int? = nil
    ) throws(PairingError) -> [UInt8] {
        if let code = PairingFormat.failure(in: message) { throw PairingError(code, fromPeer: true) }
        guard message.count >= 2, message[0] == PairingFormat.versionByte else { throw PairingError(.malformed) }
        guard message[1] == type.rawValue else { throw PairingError(.unexpected) }
        if let length, message.count != length { throw PairingError(.malformed) }
        return Array(message[2...])
    }
}

/// The keys both sides derive once the nonces are known.
struct PairingKeys: Sendable {
    let confirm: SecretBytes
    let seal: SecretBytes
    let transcript: [UInt8]

    init(shared: SecretBytes, transcript: [UInt8]) {
        self.transcript = transcript
        confirm = PairingCrypto.derive(shared, transcript: transcript, label: PairingFormat.confirmKeyLabel)
        seal = PairingCrypto.derive(shared, transcript: transcript, label: PairingFormat.sealKeyLabel)
    }

    var joinerConfirms: [UInt8] { PairingCrypto.hmac(key: confirm, PairingFormat.joinerConfirmsLabel) }
    var joinerStored: [UInt8] { PairingCrypto.hmac(key: confirm, PairingFormat.joinerStoredLabel) }
    static let accountAAD = [PairingFormat.versionByte, PairingFormat.MessageType.account.rawValue]
        + PairingFormat.accountLabel
}
