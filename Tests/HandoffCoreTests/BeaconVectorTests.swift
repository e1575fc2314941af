import Testing
@testable import HandoffCore

/// The checked-in vectors were produced by an independent Python
/// implementation (Vectors/generate_beacon_vectors.py); these tests check
/// that HandoffCore reproduces every intermediate value and byte.
@Suite struct BeaconVectorTests {
    static let vectors = VectorFile.shared.beacons

    @Test("The vector file is present and non-trivial")
    func present() {
        #expect(Self.vectors.count >= 5)
        #expect(Set(Self.vectors.map(\.payload)).count == Self.vectors.count)
    }

    @Test("Key schedule, tag, epoch key and keystream match", arguments: vectors)
    func intermediates(vector: VectorFile.Beacon) {
        let account = vector.account
        let schedule = account.schedule
        #expect(account.id.description == vector.accountID)
        #expect(AccountKeyTests.sameKey(schedule.recognitionTagKey, bytes(hex: vector.subkeys.recognitionTag)))
        #expect(AccountKeyTests.sameKey(schedule.encryptionKey, bytes(hex: vector.subkeys.encryption)))
        #expect(AccountKeyTests.sameKey(schedule.authenticationKey, bytes(hex: vector.subkeys.authentication)))
        #expect(AccountKeyTests.sameKey(schedule.activityTypeHashKey, bytes(hex: vector.subkeys.activityTypeHash)))
        #expect(schedule.payloadKey.withUnsafeBytes { Hex.encode($0) } == vector.subkeys.payload)
        #expect(Hex.encode(vector.epoch.context.bytes) == vector.epochContext)
        let keys = EpochKeys(schedule: schedule, epoch: vector.epoch)
        #expect(Hex.encode(keys.tags[Int(vector.slot)], width: 8) == vector.recognitionTag)
        #expect(keys.cipher.chacha.hasSameBytes(as: ChaCha20StreamKey(bytes: bytes(hex: vector.epochEncryptionKey))))
        let stream = keys.cipher.chacha.keystream(nonce: bytes(hex: vector.payload).prefix(8), count: BeaconFormat.ciphertextLength)
        #expect(Hex.encode(stream) == vector.keystream)
    }

    @Test("Sealing the vector's fields gives exactly its 24 bytes", arguments: vectors)
    func encode(vector: VectorFile.Beacon) {
        let payload = BeaconCodec.seal(vector.fields, account: vector.account)
        #expect(payload.count == BeaconFormat.payloadLength)
        #expect(Hex.encode(payload) == vector.payload)
    }

    @Test("Opening the vector's bytes gives exactly its fields", arguments: vectors)
    func decode(vector: VectorFile.Beacon) throws {
        let fields = try BeaconCodec.open(bytes(hex: vector.payload), account: vector.account, epoch: vector.epoch)
        #expect(fields == vector.fields)
        #expect(fields.typeHash == vector.type.hash(for: vector.account))
    }

    @Test("A recogniser in the vector's epoch recognises it, type resolved", arguments: vectors)
    func recognize(vector: VectorFile.Beacon) throws {
        var recognizer = BeaconRecognizer(
            configuration: BeaconConfiguration(epochLength: vector.epochLength), accounts: [Fixture.accountB, vector.account]
        )
        recognizer.declareActivityTypes([vector.type, Fixture.edit])
        let beacon = try recognizer.recognize(bytes(hex: vector.payload), now: Fixture.seconds(in: vector.epoch))
        #expect(beacon.fields == vector.fields)
        #expect(beacon.account == vector.account.id)
        #expect(beacon.accountName == "vector")
        #expect(beacon.activityType == .known(vector.type))
        #expect(beacon.origin == BeaconOrigin(account: vector.account.id, epoch: vector.epoch, device: vector.fields.device))
    }

    @Test("The advertising data fits the 31-byte legacy budget", arguments: vectors)
    func advertisingBudget(vector: VectorFile.Beacon) {
        let payload = bytes(hex: vector.payload)
        let data = BeaconAdvertisement.advertisingData(payload: payload, companyID: 0xFFFF)
        #expect(data.count == BeaconAdvertisement.maximumLength)
        #expect(Array(data.prefix(7)) == [0x02, 0x01, 0x06, 0x1B, 0xFF, 0xFF, 0xFF])
        #expect(BeaconAdvertisement.manufacturerPayload(in: data, companyID: 0xFFFF) == payload)
        #expect(BeaconAdvertisement.manufacturerPayload(in: data, companyID: 0x004C) == nil)
        let custom = BeaconAdvertisement.advertisingData(payload: payload, companyID: 0x1234)
        #expect(custom[5] == 0x34 && custom[6] == 0x12)
    }
}

extension VectorFile.Beacon: CustomTestStringConvertible {
    var testDescription: String { name }
}
