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
        // The tag input is the 12-byte context and the slot as one byte.
        #expect(Hex.encode(vector.epoch.context.bytes + [vector.slot]) == vector.recognitionTagInput)
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
        #expect(Hex.encode(data) == vector.advertisingData)
        #expect(data.count == BeaconAdvertisement.maximumLength)
        #expect(Array(data.prefix(7)) == [0x02, 0x01, 0x06, 0x1B, 0xFF, 0xFF, 0xFF])
        #expect(BeaconAdvertisement.manufacturerPayload(in: data, companyID: 0xFFFF) == payload)
        #expect(BeaconAdvertisement.manufacturerPayload(in: data, companyID: 0x004C) == nil)
        let custom = BeaconAdvertisement.advertisingData(payload: payload, companyID: 0x1234)
        #expect(custom[5] == 0x34 && custom[6] == 0x12)
    }

    @Test("The full advertising data, as it goes on the air, for several company identifiers")
    func advertisements() {
        let vectors = VectorFile.shared.advertisements
        #expect(vectors.count >= 3)
        for vector in vectors {
            let payload = bytes(hex: vector.payload)
            let data = BeaconAdvertisement.advertisingData(payload: payload, companyID: vector.companyID)
            #expect(Hex.encode(data) == vector.advertisingData)
            #expect(BeaconAdvertisement.manufacturerPayload(in: bytes(hex: vector.advertisingData), companyID: vector.companyID) == payload)
        }
    }

    @Test("Receptions: each payload in turn gives the vector's outcome (version, length, tag, MAC, window, replay)")
    func receptions() throws {
        let vectors = VectorFile.shared.receptions
        #expect(vectors.count >= 10)
        var outcomes: Set<String> = []
        for vector in vectors {
            let account = try AccountKey(name: "vector", secret: bytes(hex: vector.accountSecret))
            var recognizer = BeaconRecognizer(configuration: BeaconConfiguration(epochLength: vector.epochLength), accounts: [account])
            let now = Fixture.seconds(in: Epoch(index: vector.receiverEpochIndex, length: vector.epochLength))
            for (index, step) in vector.receptions.enumerated() {
                let outcome: String
                do throws(BeaconRejection) {
                    outcome = "accepted \(try recognizer.recognize(bytes(hex: step.payload), now: now).fields.sequence)"
                } catch {
                    outcome = label(error)
                }
                #expect(outcome == step.result, "\(vector.name), reception \(index)")
                outcomes.insert(String(outcome.prefix { $0 != " " }))
            }
        }
        #expect(outcomes == [
            "accepted", "tooShort", "tooLong", "unsupportedVersion", "unknownTag", "authenticationFailed", "epochTooOld",
            "epochTooNew", "replayed",
        ])
    }

    @Test("The replay window follows the vector, including a distance of exactly 2^15 (behind: refused)")
    func replayWindow() {
        let origin = BeaconOrigin(account: Fixture.accountA.id, epoch: Fixture.epoch, device: DeviceID(rawValue: 1))
        var window = ReplayWindow()
        for (index, step) in VectorFile.shared.replayWindow.enumerated() {
            #expect(window.wouldReject(origin, sequence: step.sequence) == !step.accepted, "step \(index)")
            #expect(window.accept(origin, sequence: step.sequence) == step.accepted, "step \(index): \(step.sequence)")
        }
    }
}

extension VectorFile.Beacon: CustomTestStringConvertible {
    var testDescription: String { name }
}
