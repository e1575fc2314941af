import Crypto

/// A new account secret sealed from one device of the account to another, with the list of
/// devices the rekey removes (docs/devices.md, section 7).
///
/// Only the recipient, with its identity's private key, opens it: the key comes from
/// X25519 of the sender's private key and the recipient's public key, bound by HKDF to both
/// public keys and to the old account. A removed device has the old account key but neither
/// private key. `description` shows fingerprints and the new account's identifier, never a key.
public struct RekeyEnvelope: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The envelope, `RekeyFormat.envelopeLength` bytes.
    public let bytes: [UInt8]
    /// The sealing device's fingerprint.
    public let sender: String
    /// The fingerprint of the device it is sealed to.
    public let recipient: String
    /// The new account's identifier: what the recipient will be heard under once it installed it.
    public let newAccount: AccountID
    /// The removed devices' fingerprints, in the order sealed.
    public let removed: [String]
    /// The key of the recipient's acknowledgement (`acknowledgement(requestNonce:)`).
    let acknowledgementKey: SecretBytes

    /// Seals `newAccount`'s secret from `sender` to `recipient`, bound to `oldAccount`, the key
    /// both hold now. `removing` are fingerprints (16 hex digits), at most `RekeyFormat.maximumRemoved`;
    /// they may not include the sender or the recipient.
    /// - Throws: `RekeyError`: too many, invalid or repeated fingerprints, the sender or
    ///   recipient removed, the same key, or a recipient key that gives no shared secret.
    public static func seal(
        newAccount: AccountKey, removing: [String], from sender: DeviceIdentity, to recipient: DeviceCard,
        oldAccount: AccountKey, using generator: inout some RandomNumberGenerator
    ) throws(RekeyError) -> RekeyEnvelope {
        var nonce = [UInt8](repeating: 0, count: 12)
        for index in nonce.indices { nonce[index] = UInt8.random(in: .min ... .max, using: &generator) }
        return try seal(
            newAccount: newAccount, removing: removing, from: sender, to: recipient, oldAccount: oldAccount, nonce: nonce)
    }

    /// `seal(newAccount:removing:from:to:oldAccount:using:)` with a given 12-byte nonce (for vectors).
    static func seal(
        newAccount: AccountKey, removing: [String], from sender: DeviceIdentity, to recipient: DeviceCard,
        oldAccount: AccountKey, nonce: [UInt8]
    ) throws(RekeyError) -> RekeyEnvelope {
        precondition(nonce.count == 12, "a ChaCha20-Poly1305 nonce has 12 bytes")
        let removed = try removedList(removing)
        let removedBytes = removed.map(\.bytes)
        guard !removedBytes.contains(sender.card.fingerprintBytes) else { throw .senderRemoved }
        guard !removedBytes.contains(recipient.fingerprintBytes) else { throw .recipientRemoved }
        guard newAccount.id != oldAccount.id else { throw .unchangedKey }
        let keys = try Keys(
            identity: sender, peer: recipient.publicKey, senderKey: sender.card.publicKey,
            recipientKey: recipient.publicKey, oldAccount: oldAccount.id)
        var plaintext = newAccount.withSecretBytes { Array($0) }
        defer { for index in plaintext.indices { plaintext[index] = 0 } }
        plaintext.append(UInt8(removed.count))
        for entry in removedBytes { plaintext += entry }
        plaintext += [UInt8](repeating: 0, count: RekeyFormat.plaintextLength - plaintext.count)
        let box = keys.envelope.withUnsafeBytes { key in
            // A 12-byte nonce: sealing cannot fail.
            try! ChaChaPoly.seal(
                plaintext, using: SymmetricKey(data: key), nonce: try! ChaChaPoly.Nonce(data: nonce),
                authenticating: Self.associatedData)
        }
        return RekeyEnvelope(
            bytes: [RekeyFormat.envelopeVersion] + nonce + Array(box.ciphertext) + Array(box.tag),
            sender: sender.card.fingerprint, recipient: recipient.fingerprint, newAccount: newAccount.id,
            removed: removed.map(\.text), acknowledgementKey: keys.acknowledgement)
    }

    /// An envelope sealed earlier, as kept on disk (only its bytes, its recipient and what it carries):
    /// the acknowledgement key is derived again from `sender`'s identity and `recipient`'s card,
    /// bound to `oldAccount`, as when it was sealed.
    /// - Throws: `RekeyError`: not `RekeyFormat.envelopeLength` bytes (`malformed`), or a recipient
    ///   key that gives no shared secret.
    public static func restore(
        bytes: [UInt8], newAccount: AccountID, removed: [String], from sender: DeviceIdentity, to recipient: DeviceCard,
        oldAccount: AccountID
    ) throws(RekeyError) -> RekeyEnvelope {
        guard bytes.count == RekeyFormat.envelopeLength, bytes[0] == RekeyFormat.envelopeVersion else {
            throw .malformed("\(bytes.count) bytes")
        }
        let keys = try Keys(
            identity: sender, peer: recipient.publicKey, senderKey: sender.card.publicKey,
            recipientKey: recipient.publicKey, oldAccount: oldAccount)
        return RekeyEnvelope(
            bytes: bytes, sender: sender.card.fingerprint, recipient: recipient.fingerprint, newAccount: newAccount,
            removed: removed, acknowledgementKey: keys.acknowledgement)
    }

    /// What the recipient proves it installed the new key with, for the request whose nonce
    /// is `requestNonce`: HMAC-SHA256(K_ack, "handoff v1 rekey installed" ‖ requestNonce ‖ new account id).
    func acknowledgement(requestNonce: [UInt8]) -> [UInt8] {
        Self.acknowledgement(key: acknowledgementKey, requestNonce: requestNonce, newAccount: newAccount)
    }

    static func acknowledgement(key: SecretBytes, requestNonce: [UInt8], newAccount: AccountID) -> [UInt8] {
        KeyAgreement.hmac(key: key, RekeyFormat.installedLabel + requestNonce + bigEndian(newAccount.rawValue))
    }

    public var description: String {
        "RekeyEnvelope(from: \(sender), to: \(recipient), newAccount: \(newAccount), removed: \(removed))"
    }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(
            self, children: ["sender": sender, "recipient": recipient, "newAccount": newAccount, "removed": removed],
            displayStyle: .struct)
    }

    // MARK: Opening

    /// What a recipient learns from an envelope it opened: the new account key (under the old
    /// account's name), the removed devices, and who sealed it. `description` shows no key.
    public struct Contents: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
        /// The new account key, named as the old one.
        public let newAccount: AccountKey
        /// The removed devices' fingerprints, as sealed.
        public let removed: [String]
        /// The sealing device's fingerprint.
        public let sender: String
        let acknowledgementKey: SecretBytes

        /// The acknowledgement for the request whose nonce is `requestNonce`.
        func acknowledgement(requestNonce: [UInt8]) -> [UInt8] {
            RekeyEnvelope.acknowledgement(key: acknowledgementKey, requestNonce: requestNonce, newAccount: newAccount.id)
        }

        public var description: String { "RekeyEnvelope.Contents(from: \(sender), newAccount: \(newAccount), removed: \(removed))" }
        public var debugDescription: String { description }
        public var customMirror: Mirror {
            Mirror(self, children: ["sender": sender, "newAccount": newAccount, "removed": removed], displayStyle: .struct)
        }
    }

    /// Opens an envelope sealed by `sender` (a card of this device's roster) to `identity`,
    /// bound to `oldAccount`, the key this device holds now. The checks, in order
    /// (docs/devices.md, section 7): length and version; a shared secret with the sender's key;
    /// authentication; the removed list (count, zero padding, no repeats); neither this device
    /// nor the sender removed; a new key that is not the old one.
    /// - Throws: `RekeyError`, which says which check failed.
    public static func open(
        _ envelope: some Collection<UInt8>, from sender: DeviceCard, to identity: DeviceIdentity, oldAccount: AccountKey
    ) throws(RekeyError) -> Contents {
        let envelope = Array(envelope)
        guard envelope.count == RekeyFormat.envelopeLength else { throw .malformed("\(envelope.count) bytes") }
        guard envelope[0] == RekeyFormat.envelopeVersion else { throw .malformed("version \(envelope[0])") }
        let keys = try Keys(
            identity: identity, peer: sender.publicKey, senderKey: sender.publicKey,
            recipientKey: identity.card.publicKey, oldAccount: oldAccount.id)
        var plaintext: [UInt8]
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: ChaChaPoly.Nonce(data: envelope[1..<13]), ciphertext: envelope[13..<(envelope.count - 16)],
                tag: envelope[(envelope.count - 16)...])
            plaintext = try keys.envelope.withUnsafeBytes { key in
                Array(try ChaChaPoly.open(box, using: SymmetricKey(data: key), authenticating: Self.associatedData))
            }
        } catch {
            throw .authenticationFailed
        }
        defer { for index in plaintext.indices { plaintext[index] = 0 } }
        let length = DeviceCard.fingerprintLength
        let count = Int(plaintext[RekeyFormat.secretLength])
        guard count <= RekeyFormat.maximumRemoved else { throw .tooManyRemoved(count) }
        let listStart = RekeyFormat.secretLength + 1
        let removed = (0..<count).map { Array(plaintext[(listStart + $0 * length)..<(listStart + ($0 + 1) * length)]) }
        guard plaintext[(listStart + count * length)...].allSatisfy({ $0 == 0 }) else {
            throw .malformed("padding that is not zero")
        }
        guard Set(removed).count == removed.count else { throw .malformed("a device removed twice") }
        guard !removed.contains(identity.card.fingerprintBytes) else { throw .recipientRemoved }
        guard !removed.contains(sender.fingerprintBytes) else { throw .senderRemoved }
        let newAccount: AccountKey
        do {
            newAccount = try AccountKey(name: oldAccount.name, secret: plaintext[..<RekeyFormat.secretLength])
        } catch {
            // The old name was valid and the secret has 32 bytes.
            preconditionFailure("the old account's name and 32 bytes make a key")
        }
        guard newAccount.id != oldAccount.id else { throw .unchangedKey }
        return Contents(
            newAccount: newAccount, removed: removed.map { Hex.encode($0) }, sender: sender.fingerprint,
            acknowledgementKey: keys.acknowledgement)
    }

    // MARK: Keys

    /// The envelope's associated data: the label and the version.
    static let associatedData = RekeyFormat.envelopeLabel + [RekeyFormat.envelopeVersion]

    /// K_env and K_ack of one (sender, recipient, old account).
    struct Keys {
        let envelope: SecretBytes
        let acknowledgement: SecretBytes

        /// `identity` is this side's identity, `peer` the other side's public key.
        init(
            identity: DeviceIdentity, peer: [UInt8], senderKey: [UInt8], recipientKey: [UInt8], oldAccount: AccountID
        ) throws(RekeyError) {
            guard let shared = identity.sharedSecret(with: peer) else { throw .invalidKey }
            let salt = RekeyFormat.saltLabel + bigEndian(oldAccount.rawValue)
            envelope = KeyAgreement.derive(shared, salt: salt, info: RekeyFormat.envelopeKeyLabel + senderKey + recipientKey)
            acknowledgement = KeyAgreement.derive(
                shared, salt: salt, info: RekeyFormat.acknowledgementKeyLabel + senderKey + recipientKey)
        }
    }

    /// Parses fingerprints (16 hex digits, either case), refusing more than the maximum and repeats.
    static func removedList(_ fingerprints: [String]) throws(RekeyError) -> [(text: String, bytes: [UInt8])] {
        guard fingerprints.count <= RekeyFormat.maximumRemoved else { throw .tooManyRemoved(fingerprints.count) }
        var list: [(text: String, bytes: [UInt8])] = []
        for text in fingerprints {
            guard text.utf8.count == 2 * DeviceCard.fingerprintLength, let bytes = Hex.decode(text) else {
                throw .invalidFingerprint(text)
            }
            guard !list.contains(where: { $0.bytes == bytes }) else { throw .malformed("a device removed twice") }
            list.append((Hex.encode(bytes), bytes))
        }
        return list
    }

    static func bigEndian(_ value: UInt64) -> [UInt8] {
        (0..<8).map { UInt8(truncatingIfNeeded: value >> (56 - 8 * $0)) }
    }
}
