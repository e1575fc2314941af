import Crypto

/// The joining laptop's side of one pairing attempt (docs/pairing.md, sections 3 to 5): the initiator.
///
/// `start` is the first message to write. It reveals its nonce only after it holds the offerer's
/// commitment, checks the commitment when the offerer's nonce comes, and sends `confirm` only when its
/// user said yes (`confirm()`). Any message out of order throws `unexpected`; after a throw the attempt
/// is over. It shows nothing secret in `description` or reflection.
public struct PairingJoiner: Sendable, CustomStringConvertible, CustomReflectable {
    enum Step: Sendable, Equatable {
        case awaitingCommit, awaitingNonce, awaitingUser, awaitingAccount, stored, ended
    }

    public let advertisement: PairingAdvertisement
    private let privateKey: SecretBytes
    let publicKey: [UInt8]
    let nonce: SecretBytes
    private(set) var step = Step.awaitingCommit
    private var offererKey: [UInt8] = []
    private var commitment: [UInt8] = []
    private var keys: PairingKeys?
    /// The number, once the offerer's nonce arrived and opened its commitment.
    public private(set) var number: PairingNumber?

    /// An attempt to join the offer `advertisement` announced, with the private key and nonce given (for vectors).
    init(advertisement: PairingAdvertisement, privateKey: [UInt8], nonce: [UInt8]) {
        precondition(privateKey.count == 32 && nonce.count == PairingFormat.nonceLength)
        self.advertisement = advertisement
        self.privateKey = SecretBytes(privateKey)
        publicKey = PairingCrypto.publicKey(of: self.privateKey)
        self.nonce = SecretBytes(nonce)
    }

    /// A fresh attempt: draws the private key (32 bytes), then the nonce (16 bytes).
    public init(advertisement: PairingAdvertisement, using generator: inout some RandomNumberGenerator) {
        var key = randomBytes(32, using: &generator)
        var nonce = randomBytes(PairingFormat.nonceLength, using: &generator)
        defer {
            for index in key.indices { key[index] = 0 }
            for index in nonce.indices { nonce[index] = 0 }
        }
        self.init(advertisement: advertisement, privateKey: key, nonce: nonce)
    }

    private var nonceBytes: [UInt8] { nonce.withUnsafeBytes { Array($0) } }

    /// Message 1.
    public var start: [UInt8] {
        [PairingFormat.versionByte, PairingFormat.MessageType.start.rawValue] + advertisement.pairingID + publicKey
    }

    /// Message 2 → message 3 (`nonceJ`).
    public mutating func receiveCommit(_ message: [UInt8]) throws(PairingError) -> [UInt8] {
        try expect(.awaitingCommit)
        let body = try run { () throws(PairingError) in try PairingCrypto.body(of: message, type: .commit, length: 66) }
        offererKey = Array(body[0..<32])
        commitment = Array(body[32..<64])
        step = .awaitingNonce
        return [PairingFormat.versionByte, PairingFormat.MessageType.nonceJ.rawValue] + nonceBytes
    }

    /// Message 4: checks the commitment and returns the number to show.
    public mutating func receiveNonce(_ message: [UInt8]) throws(PairingError) -> PairingNumber {
        try expect(.awaitingNonce)
        let offererNonce = try run { () throws(PairingError) in
            try PairingCrypto.body(of: message, type: .nonceO, length: 2 + PairingFormat.nonceLength)
        }
        let expected = PairingCrypto.commitment(
            offererNonce: offererNonce, joinerKey: publicKey, offererKey: offererKey)
        guard PairingCrypto.equal(expected, commitment) else { throw fail(.commitmentMismatch) }
        let (ownKey, peerKey) = (privateKey, offererKey)
        let shared = try run { () throws(PairingError) in try PairingCrypto.sharedSecret(ownKey, peerKey) }
        let transcript = PairingCrypto.transcript(
            pairingID: advertisement.pairingID, joinerKey: publicKey, offererKey: offererKey, joinerNonce: nonceBytes,
            offererNonce: offererNonce)
        keys = PairingKeys(shared: shared, transcript: transcript)
        let number = PairingCrypto.number(
            joinerNonce: nonceBytes, joinerKey: publicKey, offererKey: offererKey, offererNonce: offererNonce)
        self.number = number
        step = .awaitingUser
        return number
    }

    /// The joining user compared the numbers and said yes: message 5 (`confirm`).
    public mutating func confirm() throws(PairingError) -> [UInt8] {
        try expect(.awaitingUser)
        guard let keys else { throw fail(.unexpected) }
        step = .awaitingAccount
        return [PairingFormat.versionByte, PairingFormat.MessageType.confirm.rawValue] + keys.joinerConfirms
    }

    /// Message 6: the account, opened and checked. Store `key` (under `name` or another the user chose),
    /// then send `done` (message 7). Nothing is stored by this type.
    public mutating func receiveAccount(_ message: [UInt8]) throws(PairingError) -> (key: AccountKey, done: [UInt8]) {
        try expect(.awaitingAccount)
        let body = try run { () throws(PairingError) in try PairingCrypto.body(of: message, type: .account) }
        // nonce 12, secret 32, name length 1, name ≥ 1, tag 16
        guard body.count >= 12 + 33 + 1 + 16, let keys else { throw fail(.malformed) }
        var plaintext: [UInt8]
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: ChaChaPoly.Nonce(data: body[0..<12]), ciphertext: body[12..<(body.count - 16)],
                tag: body[(body.count - 16)...])
            plaintext = try keys.seal.withUnsafeBytes { key in
                Array(try ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: PairingKeys.accountAAD))
            }
        } catch {
            throw fail(.authenticationFailed)
        }
        defer { for index in plaintext.indices { plaintext[index] = 0 } }
        let nameBytes = plaintext[33...]
        guard Int(plaintext[32]) == nameBytes.count, let name = String(validating: nameBytes, as: UTF8.self),
            let key = try? AccountKey(name: name, secret: plaintext[0..<32])
        else { throw fail(.malformed) }
        step = .stored
        return (key, [PairingFormat.versionByte, PairingFormat.MessageType.done.rawValue] + keys.joinerStored)
    }

    /// Ends the attempt from outside (refusal, timeout, cancellation, a key it could not store).
    /// Returns the `failed` message to send.
    public mutating func end(_ code: PairingFailure) -> [UInt8] {
        step = .ended
        return PairingFormat.failedMessage(code)
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

    public var description: String { "PairingJoiner(step: \(step))" }
    public var customMirror: Mirror { Mirror(self, children: ["step": step], displayStyle: .struct) }
}
