import Foundation
import Testing

@testable import HandoffCore

/// The checked-in vectors (Vectors/rekey-v1.json) come from an independent Python implementation
/// written from docs/devices.md section 7 and docs/continuation.md section 11
/// (Vectors/generate_rekey_vectors.py); HandoffCore must reproduce every byte.
@Suite struct RekeyVectorTests {
    struct File: Decodable, Sendable {
        struct Envelope: Decodable, Sendable {
            let name: String
            let senderPrivateKey, recipientPrivateKey, oldAccountSecret, newAccountSecret: String
            let removed: [String]
            let envelopeNonce, senderPublicKey, recipientPublicKey, senderFingerprint, recipientFingerprint: String
            let oldAccountID, newAccountID, sharedSecret, salt, envelopeKeyInfo, envelopeKey, acknowledgementKey: String
            let plaintext, envelope: String

            var sender: DeviceIdentity { try! DeviceIdentity(privateKey: bytes(hex: senderPrivateKey), name: "Sender") }
            var recipient: DeviceIdentity { try! DeviceIdentity(privateKey: bytes(hex: recipientPrivateKey), name: "Recipient") }
            var old: AccountKey { try! AccountKey(name: "vector", secret: bytes(hex: oldAccountSecret)) }
            var new: AccountKey { try! AccountKey(name: "vector", secret: bytes(hex: newAccountSecret)) }
        }

        struct Exchange: Decodable, Sendable {
            let epochLength: UInt32
            let epochIndex: UInt64
            let slot: UInt8
            let sequence: UInt16
            let originDevice, requesterDevice, requestNonce, requestAEADNonce, responseNonce: String
            let epochContext, tag, requestPlaintext, request, acknowledgement, response: String
            let envelope: Int
        }

        let envelopes: [Envelope]
        let exchanges: [Exchange]

        static let shared: File = {
            guard let url = Bundle.module.url(forResource: "rekey-v1", withExtension: "json", subdirectory: "Vectors")
            else { fatalError("Vectors/rekey-v1.json is not in the test bundle") }
            return try! JSONDecoder().decode(File.self, from: Data(contentsOf: url))
        }()
    }

    static let envelopes = File.shared.envelopes
    static let exchanges = File.shared.exchanges

    static func hex(_ key: SecretBytes) -> String { key.withUnsafeBytes { Hex.encode($0) } }

    @Test func theFileIsPresent() {
        #expect(Self.envelopes.count >= 3 && Self.exchanges.count == Self.envelopes.count)
        #expect(Set(Self.envelopes.map(\.removed.count)) == [0, 1, 8])
    }

    @Test("Keys, fingerprints and the envelope match byte for byte", arguments: envelopes)
    func envelope(vector: File.Envelope) throws {
        let sender = vector.sender, recipient = vector.recipient
        #expect(Hex.encode(sender.card.publicKey) == vector.senderPublicKey)
        #expect(Hex.encode(recipient.card.publicKey) == vector.recipientPublicKey)
        #expect(sender.card.fingerprint == vector.senderFingerprint)
        #expect(recipient.card.fingerprint == vector.recipientFingerprint)
        #expect(vector.old.id.description == vector.oldAccountID && vector.new.id.description == vector.newAccountID)
        let shared = try #require(sender.sharedSecret(with: recipient.card.publicKey))
        #expect(Self.hex(shared) == vector.sharedSecret)
        #expect(Hex.encode(RekeyFormat.saltLabel + RekeyEnvelope.bigEndian(vector.old.id.rawValue)) == vector.salt)
        #expect(Hex.encode(RekeyFormat.envelopeKeyLabel + sender.card.publicKey + recipient.card.publicKey) == vector.envelopeKeyInfo)
        for (identity, peer) in [(sender, recipient.card.publicKey), (recipient, sender.card.publicKey)] {
            let keys = try RekeyEnvelope.Keys(
                identity: identity, peer: peer, senderKey: sender.card.publicKey, recipientKey: recipient.card.publicKey,
                oldAccount: vector.old.id)
            #expect(Self.hex(keys.envelope) == vector.envelopeKey)
            #expect(Self.hex(keys.acknowledgement) == vector.acknowledgementKey)
        }
        let sealed = try RekeyEnvelope.seal(
            newAccount: vector.new, removing: vector.removed, from: sender, to: recipient.card, oldAccount: vector.old,
            nonce: bytes(hex: vector.envelopeNonce))
        #expect(Hex.encode(sealed.bytes) == vector.envelope)
        let contents = try RekeyEnvelope.open(
            bytes(hex: vector.envelope), from: sender.card, to: recipient, oldAccount: vector.old)
        #expect(contents.newAccount == vector.new)
        #expect(contents.removed == vector.removed)
        #expect(contents.newAccount.withSecretBytes { Hex.encode($0) } + Hex.encode([UInt8(vector.removed.count)])
            == String(vector.plaintext.prefix(66)))
    }

    @Test("The rekey request and response match byte for byte, and each side accepts the other's", arguments: exchanges)
    func exchange(vector: File.Exchange) throws {
        let envelopeVector = Self.envelopes[vector.envelope]
        let old = envelopeVector.old, sender = envelopeVector.sender, recipient = envelopeVector.recipient
        let epoch = Epoch(index: vector.epochIndex, length: vector.epochLength)
        #expect(Hex.encode(epoch.context.bytes) == vector.epochContext)
        let fields = BeaconFields(
            headerNibble: 0, epoch: epoch, slot: vector.slot, salt: 0x123456, typeHash: Fixture.browse.hash(for: old),
            flags: [.hasPayload], sequence: vector.sequence, device: DeviceID(rawValue: UInt32(vector.originDevice, radix: 16)!))
        let payload = BeaconCodec.seal(fields, account: old)
        #expect(Hex.encode(payload[1..<5]) == vector.tag)
        let now = Fixture.seconds(in: epoch)
        let configuration = BeaconConfiguration(epochLength: vector.epochLength)
        var recognizer = BeaconRecognizer(configuration: configuration, accounts: [old])
        let beacon = try recognizer.recognize(payload, now: now)
        let envelope = try RekeyEnvelope.seal(
            newAccount: envelopeVector.new, removing: envelopeVector.removed, from: sender, to: recipient.card,
            oldAccount: old, nonce: bytes(hex: envelopeVector.envelopeNonce))
        var draws = FixedGenerator(bytes: bytes(hex: vector.requestNonce) + bytes(hex: vector.requestAEADNonce))
        let pending = PendingContinuation(
            beacon: beacon, tag: beacon.tagBytes, account: old,
            requester: DeviceID(rawValue: UInt32(vector.requesterDevice, radix: 16)!), rekey: envelope, using: &draws)
        #expect(Hex.encode(pending.request) == vector.request)

        var server = ContinuationServer(configuration: configuration)
        server.acceptsRekeys = true
        server.didAdvertise(payload, account: old, activity: "a", now: now)
        let accepted = try server.accept(bytes(hex: vector.request), now: now)
        #expect(accepted.rekey?.sender == sender.card.fingerprint)
        #expect(Hex.encode(accepted.requestNonce) == vector.requestNonce)
        let roster = DeviceRoster(devices: [.init(card: sender.card, introduced: 0)])
        let contents = try server.openRekey(accepted, identity: recipient, roster: roster)
        #expect(Hex.encode(contents.acknowledgement(requestNonce: accepted.requestNonce)) == vector.acknowledgement)
        var responseDraws = FixedGenerator(bytes: bytes(hex: vector.responseNonce))
        let response = server.respond(to: accepted, installed: contents, using: &responseDraws)
        #expect(Hex.encode(response) == vector.response)
        try pending.openRekey(response: bytes(hex: vector.response))
    }
}
