import PropertyBased
import Testing
@testable import HandoffCore

@Suite struct BeaconPropertyTests {
    @Test("Decoding arbitrary bytes of any length 0...64 never crashes and never accepts")
    func arbitraryBytes() async {
        await propertyCheck(count: 2000, input: Gen.uint8().array(of: 0...64)) { payload in
            var recognizer = BeaconRecognizer(accounts: [Fixture.accountA])
            do throws(BeaconRejection) {
                _ = try recognizer.recognize(payload, now: Fixture.now)
                Issue.record("random bytes accepted: \(payload)")
            } catch {
                switch error {
                case .tooShort(let length): #expect(length == payload.count && length < 24)
                case .tooLong(let length): #expect(length == payload.count && length > 24)
                case .unsupportedVersion(let version): #expect(version == payload[0] >> 4 && version != 1)
                case .unknownTag, .authenticationFailed: #expect(payload.count == 24)
                default: Issue.record("unexpected \(error) for random bytes")
                }
            }
            #expect(throws: BeaconRejection.self) { try BeaconCodec.open(payload, account: Fixture.accountA, epoch: Fixture.epoch) }
        }
    }

    @Test("Arbitrary bytes behind a valid header and tag are rejected as forgeries")
    func forgedBodies() async {
        let genuine = BeaconCodec.seal(Fixture.fields(), account: Fixture.accountA)
        await propertyCheck(count: 500, input: Gen.uint8().array(of: 19)) { body in
            var recognizer = BeaconRecognizer(accounts: [Fixture.accountA])
            let payload = Array(genuine[0..<5]) + body
            guard payload != genuine else { return }
            #expect(throws: BeaconRejection.authenticationFailed) { try recognizer.recognize(payload, now: Fixture.now) }
        }
    }

    @Test("Seal then open is the identity on every field")
    func roundTrip() async {
        let epochs = zip(Gen.uint64(in: 0...UInt64.max / 2), Gen.uint32(in: 1...UInt32.max))
        let header = zip(Gen.uint8(in: 0...15), Gen.uint8(in: 0...7), Gen.uint32(in: 0...0xff_ffff))
        let body = zip(Gen.uint32(), Gen.uint8(), Gen.uint16(), Gen.uint32())
        await propertyCheck(count: 300, input: epochs, header, body) { epochInput, headerInput, bodyInput throws in
            let epoch = Epoch(index: epochInput.0, length: epochInput.1)
            let fields = BeaconFields(
                headerNibble: headerInput.0, epoch: epoch, slot: headerInput.1, salt: headerInput.2,
                typeHash: ActivityTypeHash(rawValue: bodyInput.0), flags: BeaconFlags(rawValue: bodyInput.1),
                sequence: bodyInput.2, device: DeviceID(rawValue: bodyInput.3)
            )
            let payload = BeaconCodec.seal(fields, account: Fixture.accountA)
            #expect(payload.count == 24)
            #expect(payload[0] >> 4 == 1)
            #expect(try BeaconCodec.open(payload, account: Fixture.accountA, epoch: epoch) == fields)
            var recognizer = BeaconRecognizer(configuration: BeaconConfiguration(epochLength: epoch.length), accounts: [Fixture.accountA])
            #expect(try recognizer.recognize(payload, now: Double(epoch.startSeconds)).fields == fields)
        }
    }

    @Test("Encoder then recogniser is the identity for random accounts and times")
    func encoderRoundTrip() async {
        await propertyCheck(count: 100, input: Gen.uint8().array(of: 32), Gen.uint64(in: 0...4_000_000_000), Gen.uint8()) { secret, seconds, flags throws in
            let account = try AccountKey(name: "p", secret: secret)
            var encoder = BeaconEncoder()
            var recognizer = BeaconRecognizer(accounts: [Fixture.accountB, account])
            recognizer.declareActivityTypes([Fixture.edit])
            let now = Double(seconds)
            let payload = encoder.encode(account: account, activityType: Fixture.edit, flags: BeaconFlags(rawValue: flags), now: now)
            let beacon = try recognizer.recognize(payload, now: now)
            #expect(beacon.account == account.id)
            #expect(beacon.activityType == .known(Fixture.edit))
            #expect(beacon.flags.rawValue == flags)
            #expect(beacon.epoch == Epoch(containing: now))
            #expect(encoder.isOwn(beacon))
        }
    }
}
