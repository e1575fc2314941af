import Crypto

/// The offering laptop's side of one pairing attempt (docs/pairing.md, sections 3 to 5): the responder.
///
/// It answers `start` with its commitment, `nonceJ` with its nonce (and the number), and seals the
/// account only once both its user confirmed (`userConfirmed`) and the joiner's `confirm` verified.
/// Any message out of order throws `unexpected`; after a throw the attempt is over. It shows nothing
/// secret in `description` or reflection.
public struct PairingOfferer: Sendable, CustomStringConvertible, CustomReflectable {
    enum Step: Sendable, Equatable {
        case awaitingStart, awaitingNonce, awaitingConfirmations, awaitingDone, paired, ended
    }

    public let advertisement: PairingAdvertisement
    let account: AccountKey
    private let privateKey: SecretBytes
    let publicKey: [UInt8]
    let nonce: SecretBytes
    private(set) var step = Step.awaitingStart
    private var joinerKey: [UInt8] = []
    private var keys: PairingKeys?
    private var userSaidYes = false
    private var joinerConfirmed = false
    /// The number, once `nonceJ` arrived.
    public private(set) var number: PairingNumber?

    /// An offer of `account` under `advertisement`, with the private key and nonce given (for vectors).
    init(advertisement: PairingAdvertisement, account: AccountKey, privateKey: [UInt8], nonce: [UInt8]) {
        precondition(privateKey.count == 32 && nonce.count == PairingFormat.nonceLength)
        self.advertisement = advertisement
        self.account = account
        self.privateKey = SecretBytes(privateKey)
        publicKey = PairingCrypto.publicKey(of: self.privateKey)
        self.nonce = SecretBytes(nonce)
    }

    /// A fresh offer: draws the private key (32 bytes), then the nonce (16 bytes).
    public init(
        advertisement: PairingAdvertisement, account: AccountKey, using generator: inout some RandomNumberGenerator
    ) {
        var key = randomBytes(32, using: &generator)
        var nonce = randomBytes(PairingFormat.nonceLength, using: &generator)
        defer {
            for index in key.indices { key[index] = 0 }
            for index in nonce.indices { nonce[index] = 0 }
        }
        self.init(advertisement: advertisement, account: account, privateKey: key, nonce: nonce)
    }

    private var nonceBytes: [UInt8] { nonce.withUnsafeBytes { Array($0) } }

    /// Message 1 → message 2 (`commit`).
    public mutating func receiveStart(_ message: [UInt8]) throws(PairingError) -> [UInt8] {
        try expect(.awaitingStart)
        let body = try run { () throws(PairingError) in try PairingCrypto.body(of: message, type: .start, length: 42) }
        guard Array(body[0..<8]) == advertisement.pairingID else { throw fail(.unexpected) }
        joinerKey = Array(body[8..<40])
        step = .awaitingNonce
        let commitment = PairingCrypto.commitment(offererNonce: nonceBytes, joinerKey: joinerKey, offererKey: publicKey)
        return [PairingFormat.versionByte, PairingFormat.MessageType.commit.rawValue] + publicKey + commitment
    }

    /// Message 3 → message 4 (`nonceO`) and the number to show.
    public mutating func receiveNonce(_ message: [UInt8]) throws(PairingError) -> (reply: [UInt8], number: PairingNumber) {
        try expect(.awaitingNonce)
        let joinerNonce = try run { () throws(PairingError) in
            try PairingCrypto.body(of: message, type: .nonceJ, length: 2 + PairingFormat.nonceLength)
        }
        let (ownKey, peerKey) = (privateKey, joinerKey)
        let shared = try run { () throws(PairingError) in try PairingCrypto.sharedSecret(ownKey, peerKey) }
        let transcript = PairingCrypto.transcript(
            pairingID: advertisement.pairingID, joinerKey: joinerKey, offererKey: publicKey, joinerNonce: joinerNonce,
            offererNonce: nonceBytes)
        keys = PairingKeys(shared: shared, transcript: transcript)
        let number = PairingCrypto.number(
            joinerNonce: joinerNonce, joinerKey: joinerKey, offererKey: publicKey, offererNonce: nonceBytes)
        self.number = number
        step = .awaitingConfirmations
        return ([PairingFormat.versionByte, PairingFormat.MessageType.nonceO.rawValue] + nonceBytes, number)
    }

    /// The offering user compared the numbers and said yes. Returns message 6 when the joiner's `confirm`
    /// has already verified, nil while it has not arrived.
    public mutating func userConfirmed(using generator: inout some RandomNumberGenerator) throws(PairingError) -> [UInt8]? {
        try expect(.awaitingConfirmations)
        userSaidYes = true
        return sealIfReady(nonce: randomBytes(12, using: &generator))
    }

    /// Message 5. Returns message 6 when the offering user has already said yes, nil while not.
    public mutating func receiveConfirm(
        _ message: [UInt8], using generator: inout some RandomNumberGenerator
    ) throws(PairingError) -> [UInt8]? {
        try expect(.awaitingConfirmations)
        guard !joinerConfirmed else { throw fail(.unexpected) }
        let body = try run { () throws(PairingError) in try PairingCrypto.body(of: message, type: .confirm, length: 34) }
        guard let keys, PairingCrypto.equal(body, keys.joinerConfirms) else { throw fail(.confirmationFailed) }
        joinerConfirmed = true
        return sealIfReady(nonce: randomBytes(12, using: &generator))
    }

    /// Message 7: the joiner stored the key. The pairing succeeded.
    public mutating func receiveDone(_ message: [UInt8]) throws(PairingError) {
        try expect(.awaitingDone)
        let body = try run { () throws(PairingError) in try PairingCrypto.body(of: message, type: .done, length: 34) }
        guard let keys, PairingCrypto.equal(body, keys.joinerStored) else { throw fail(.confirmationFailed) }
        step = .paired
    }

    /// Ends the attempt from outside (refusal, timeout, cancellation). Returns the `failed` message to send.
    public mutating func end(_ code: PairingFailure) -> [UInt8] {
        step = .ended
        return PairingFormat.failedMessage(code)
    }

    /// The name of the account offered.
    public var accountName: String { account.name }

    /// True once `done` verified.
    public var isPaired: Bool { step == .paired }

    /// Message 6 once both confirmations are in.
    mutating func sealIfReady(nonce aeadNonce: [UInt8]) -> [UInt8]? {
        guard userSaidYes, joinerConfirmed, let keys else { return nil }
        step = .awaitingDone
        var plaintext = account.withSecretBytes { Array($0) }
        defer { for index in plaintext.indices { plaintext[index] = 0 } }
        let name = Array(account.name.utf8)
        plaintext += [UInt8(name.count)] + name
        let box = keys.seal.withUnsafeBytes { key in
            // A 32-byte key and a 12-byte nonce: cannot fail.
            try! ChaChaPoly.seal(
                plaintext, using: SymmetricKey(data: key), nonce: try! ChaChaPoly.Nonce(data: aeadNonce),
                authenticating: PairingKeys.accountAAD)
        }
        return [PairingFormat.versionByte, PairingFormat.MessageType.account.rawValue] + aeadNonce
            + Array(box.ciphertext) + Array(box.tag)
    }

    private mutating func expect(_ wanted: Step) throws(PairingError) {
        guard step == wanted else { throw fail(.unexpected) }
    }

    private mutating func fail(_ code: PairingFailure) -> PairingError {
        step = .ended
        return PairingError(code)
    }

    private mutating func run<T>(_ body: () throws(PairingError) -> T) throws(PairingError) -> T {
        do { return try body() } catch {
            step = .ended
            throw error
        }
    }

    public var description: String { "PairingOfferer(step: \(step))" }
    public var customMirror: Mirror { Mirror(self, children: ["step": step], displayStyle: .struct) }
}
