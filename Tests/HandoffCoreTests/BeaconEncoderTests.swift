import Testing
@testable import HandoffCore

@Suite struct BeaconEncoderTests {
    static func open(_ payload: [UInt8], epoch: Epoch = Fixture.epoch) throws -> BeaconFields {
        try BeaconCodec.open(payload, account: Fixture.accountA, epoch: epoch)
    }

    @Test("Injected randomness makes encoding deterministic, in the documented draw order")
    func deterministic() throws {
        var first = BeaconEncoder(), second = BeaconEncoder()
        var g1 = SeededGenerator(seed: 5), g2 = SeededGenerator(seed: 5)
        for _ in 0..<5 {
            let a = first.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now, using: &g1)
            let b = second.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now, using: &g2)
            #expect(a == b)
        }
        // Replaying the documented draws by hand gives the same first beacon.
        var draws = SeededGenerator(seed: 77)
        let slot = UInt8.random(in: 0..<8, using: &draws)
        let device = UInt32.random(in: .min ... .max, using: &draws)
        let sequence = UInt16.random(in: .min ... .max, using: &draws)
        let nonce = UInt32.random(in: 0..<(1 << 28), using: &draws)
        let expected = BeaconCodec.seal(
            BeaconFields(
                headerNibble: UInt8(nonce >> 24), epoch: Fixture.epoch, slot: slot, salt: nonce & 0xff_ffff,
                typeHash: Fixture.browse.hash(for: Fixture.accountA), flags: .hasWebpageURL, sequence: sequence,
                device: DeviceID(rawValue: device)
            ), account: Fixture.accountA)
        var encoder = BeaconEncoder()
        var generator = SeededGenerator(seed: 77)
        #expect(encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: .hasWebpageURL, now: Fixture.now, using: &generator) == expected)
    }

    @Test("Within an epoch: same slot and device, sequence +1, fresh salt every beacon")
    func withinEpoch() throws {
        var encoder = BeaconEncoder()
        var generator = SeededGenerator(seed: 6)
        let beacons = try (0..<50).map { index in
            try Self.open(encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now + Double(index), using: &generator))
        }
        #expect(Set(beacons.map(\.slot)).count == 1)
        #expect(Set(beacons.map(\.device)).count == 1)
        for (previous, next) in zip(beacons, beacons.dropFirst()) {
            #expect(next.sequence == previous.sequence &+ 1)
        }
        #expect(Set(beacons.map { UInt32($0.headerNibble) << 24 | $0.salt }).count == beacons.count)
    }

    /// A generator with little entropy (20,000 values), so that nibble-and-salt draws repeat often.
    struct FewValuesGenerator: RandomNumberGenerator {
        var inner: SeededGenerator
        mutating func next() -> UInt64 { (inner.next() % 20_000) << 4 }
    }

    @Test("One encoder never repeats a nonce in an epoch, however many beacons it sends (well past 4,096)")
    func noncesNeverRepeat() {
        var encoder = BeaconEncoder()
        var generator = FewValuesGenerator(inner: SeededGenerator(seed: 9))
        var nonces = Set<[UInt8]>()
        let count = 6_000
        for _ in 0..<count {
            let payload = encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now, using: &generator)
            // The nonce is header ‖ tag ‖ salt; the tag is fixed in the epoch.
            nonces.insert(Array(payload[0..<8]))
        }
        #expect(nonces.count == count)
        #expect(BeaconEncoder.noncesPerEpoch == 1 << 28)
    }

    @Test("A new epoch draws a new slot, device and sequence start")
    func newEpoch() throws {
        var encoder = BeaconEncoder()
        var generator = SeededGenerator(seed: 8)
        var devices: Set<DeviceID> = []
        var starts: Set<UInt16> = []
        var slots: Set<UInt8> = []
        for offset in 0..<40 {
            let epoch = Fixture.epoch.advanced(by: Int64(offset))
            let fields = try Self.open(encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.seconds(in: epoch), using: &generator), epoch: epoch)
            devices.insert(fields.device)
            starts.insert(fields.sequence)
            slots.insert(fields.slot)
        }
        #expect(devices.count == 40)
        #expect(starts.count >= 39)
        #expect(slots.count == 8)
    }

    @Test("Own beacons are recognised as own for the current and previous epoch only")
    func ownBeacons() throws {
        var encoder = BeaconEncoder()
        var recognizer = BeaconRecognizer(accounts: [Fixture.accountA])
        let first = try recognizer.recognize(encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now), now: Fixture.now)
        #expect(encoder.isOwn(first))
        let later = Fixture.seconds(in: Fixture.epoch.advanced(by: 1))
        let second = try recognizer.recognize(encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: later), now: later)
        #expect(encoder.isOwn(first) && encoder.isOwn(second))
        let muchLater = Fixture.seconds(in: Fixture.epoch.advanced(by: 3))
        _ = encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: muchLater)
        #expect(!encoder.isOwn(first))
        let stranger = BeaconEncoder()
        #expect(!stranger.isOwn(second))
    }

    @Test("After the per-device limit the encoder switches to a new device identifier")
    func deviceRollover() throws {
        var encoder = BeaconEncoder()
        var generator = SeededGenerator(seed: 10)
        let start = try Self.open(encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now, using: &generator))
        for _ in 1..<BeaconEncoder.maximumBeaconsPerDevice {
            _ = encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now, using: &generator)
        }
        let next = try Self.open(encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now, using: &generator))
        #expect(next.device != start.device)
        #expect(next.slot == start.slot)
    }

    @Test("The type hash follows the activity type")
    func typeChanges() throws {
        var encoder = BeaconEncoder()
        let browse = try Self.open(encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now))
        let edit = try Self.open(encoder.encode(account: Fixture.accountA, activityType: Fixture.edit, flags: [], now: Fixture.now))
        #expect(browse.typeHash == Fixture.browse.hash(for: Fixture.accountA))
        #expect(edit.typeHash == Fixture.edit.hash(for: Fixture.accountA))
    }
}

/// A stranger holding every beacon must not be able to link two epochs.
@Suite struct UnlinkabilityTests {
    static let epochs = 200

    /// One device's first beacon in each of 200 consecutive epochs.
    static func beacons(seed: UInt64) -> [[UInt8]] {
        var encoder = BeaconEncoder()
        var generator = SeededGenerator(seed: seed)
        return (0..<epochs).map { offset in
            encoder.encode(
                account: Fixture.accountA, activityType: Fixture.browse, flags: .hasPayload,
                now: Fixture.seconds(in: Fixture.epoch.advanced(by: Int64(offset))), using: &generator
            )
        }
    }

    @Test("Every byte position except the version nibble takes many values across epochs")
    func bytePositionsVary() {
        let beacons = Self.beacons(seed: 12)
        #expect(Set(beacons.map { $0[0] >> 4 }) == [1])
        #expect(Set(beacons.map { $0[0] & 0x0f }).count >= 14)
        for position in 1..<BeaconFormat.payloadLength {
            let values = beacons.map { $0[position] }
            // 200 uniform draws from 256 values give about 139 distinct values.
            #expect(Set(values).count >= 100, "byte \(position) took only \(Set(values).count) values")
            // No predictable sequence: the differences between epochs vary too.
            let steps = zip(values, values.dropFirst()).map { $1 &- $0 }
            #expect(Set(steps).count >= 100, "byte \(position) changes by only \(Set(steps).count) distinct steps")
        }
    }

    @Test("No field repeats across epochs: tag, salt, ciphertext, MAC")
    func fieldsNeverRepeat() {
        let beacons = Self.beacons(seed: 13)
        for (name, range) in [("tag", 1..<5), ("salt", 5..<8), ("ciphertext", 8..<19), ("MAC", 19..<24)] {
            #expect(Set(beacons.map { Array($0[range]) }).count == Self.epochs, "\(name) repeated")
        }
    }

    @Test("Sequence numbers and device identifiers restart unpredictably each epoch")
    func countersDoNotCarryOver() throws {
        let beacons = Self.beacons(seed: 14)
        let fields = try beacons.enumerated().map { offset, payload in
            try BeaconCodec.open(payload, account: Fixture.accountA, epoch: Fixture.epoch.advanced(by: Int64(offset)))
        }
        let sequenceSteps = zip(fields, fields.dropFirst()).map { $1.sequence &- $0.sequence }
        #expect(Set(sequenceSteps).count >= 190)
        #expect(Set(fields.map(\.device)).count == Self.epochs)
    }

    @Test("Within an epoch the encrypted fields look fresh in every beacon, though type and flags stay the same")
    func ciphertextVariesWithinEpoch() {
        var encoder = BeaconEncoder()
        var generator = SeededGenerator(seed: 16)
        let beacons = (0..<200).map { _ in
            encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: .hasPayload, now: Fixture.now, using: &generator)
        }
        // Bytes 8..<13 carry the type hash and flags, the same plaintext in every
        // beacon: a keystream that ignored the per-beacon nonce would leave them constant.
        for position in 8..<13 {
            #expect(Set(beacons.map { $0[position] }).count >= 100, "byte \(position)")
        }
        #expect(Set(beacons.map { Array($0[8..<19]) }).count == beacons.count)
    }

    @Test("Two devices of one account in the same epoch usually differ in tag")
    func devicesShareAccountNotTag() throws {
        var generator = SeededGenerator(seed: 15)
        var sameTag = 0
        for offset in 0..<200 {
            let now = Fixture.seconds(in: Fixture.epoch.advanced(by: Int64(offset)))
            var first = BeaconEncoder(), second = BeaconEncoder()
            let a = first.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: now, using: &generator)
            let b = second.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: now, using: &generator)
            if a[1..<5] == b[1..<5] { sameTag += 1 }
        }
        // Expected 1 in 8 (same slot): about 25 of 200.
        #expect(sameTag > 5 && sameTag < 60)
    }
}

@Suite struct ReplayWindowTests {
    static let origin = BeaconOrigin(account: Fixture.accountA.id, epoch: Fixture.epoch, device: DeviceID(rawValue: 1))

    static func accept(_ window: inout ReplayWindow, _ origin: BeaconOrigin, sequence: UInt16) -> Bool {
        window.accept(origin, sequence: sequence)
    }

    @Test("Each sequence number is accepted once; late ones within 64 are accepted")
    func window() {
        var window = ReplayWindow()
        #expect(Self.accept(&window, Self.origin, sequence: 100))
        #expect(!Self.accept(&window, Self.origin, sequence: 100))
        #expect(Self.accept(&window, Self.origin, sequence: 105))
        #expect(Self.accept(&window, Self.origin, sequence: 101))  // late but new
        #expect(!Self.accept(&window, Self.origin, sequence: 101))
        #expect(window.wouldReject(Self.origin, sequence: 105))
        #expect(!window.wouldReject(Self.origin, sequence: 102))
        #expect(Self.accept(&window, Self.origin, sequence: 200))
        #expect(!Self.accept(&window, Self.origin, sequence: 136))  // 64 behind: too old
        #expect(Self.accept(&window, Self.origin, sequence: 137))   // 63 behind: still in the window
        #expect(window.count == 1)
    }

    @Test("Sequence numbers wrap around")
    func wrap() {
        var window = ReplayWindow()
        #expect(Self.accept(&window, Self.origin, sequence: 0xFFFE))
        #expect(Self.accept(&window, Self.origin, sequence: 0xFFFF))
        #expect(Self.accept(&window, Self.origin, sequence: 0))
        #expect(Self.accept(&window, Self.origin, sequence: 1))
        #expect(!Self.accept(&window, Self.origin, sequence: 0xFFFF))
        #expect(!Self.accept(&window, Self.origin, sequence: 0))
    }

    @Test("Origins are independent; capacity evicts the least recently updated")
    func capacity() {
        var window = ReplayWindow(capacity: 2)
        let other = BeaconOrigin(account: Fixture.accountA.id, epoch: Fixture.epoch, device: DeviceID(rawValue: 2))
        let third = BeaconOrigin(account: Fixture.accountA.id, epoch: Fixture.epoch.advanced(by: 1), device: DeviceID(rawValue: 1))
        #expect(Self.accept(&window, Self.origin, sequence: 5))
        #expect(Self.accept(&window, other, sequence: 5))
        #expect(Self.accept(&window, Self.origin, sequence: 6))
        #expect(Self.accept(&window, third, sequence: 5))  // evicts `other`
        #expect(window.count == 2)
        #expect(!window.wouldReject(other, sequence: 5))
        #expect(window.wouldReject(Self.origin, sequence: 6))
        window.retain(epochs: Fixture.epoch.index...Fixture.epoch.index)
        #expect(window.count == 1)
        window.removeAll()
        #expect(window.count == 0)
    }
}
