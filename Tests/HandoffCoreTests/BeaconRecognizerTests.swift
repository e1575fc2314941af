import Testing
@testable import HandoffCore

@Suite struct BeaconRecognizerTests {
    static func recognizer(_ accounts: [AccountKey] = [Fixture.accountA]) -> BeaconRecognizer {
        var recognizer = BeaconRecognizer(accounts: accounts)
        recognizer.declareActivityTypes([Fixture.browse])
        return recognizer
    }

    static func seal(_ fields: BeaconFields = Fixture.fields(), account: AccountKey = Fixture.accountA) -> [UInt8] {
        BeaconCodec.seal(fields, account: account)
    }

    static func rejection(_ payload: [UInt8], _ recognizer: inout BeaconRecognizer, now: Double = Fixture.now) -> BeaconRejection? {
        do throws(BeaconRejection) {
            _ = try recognizer.recognize(payload, now: now)
            return nil
        } catch {
            return error
        }
    }

    @Test("Encoder to recogniser round trip")
    func roundTrip() throws {
        var encoder = BeaconEncoder()
        var recognizer = Self.recognizer([Fixture.accountB, Fixture.accountA])
        var generator = SeededGenerator(seed: 3)
        for flags in [BeaconFlags(), .hasPayload, [.hasWebpageURL, .supportsStreams]] {
            let payload = encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: flags, now: Fixture.now, using: &generator)
            let beacon = try recognizer.recognize(payload, now: Fixture.now)
            #expect(beacon.account == Fixture.accountA.id)
            #expect(beacon.accountName == "Vector A")
            #expect(beacon.flags == flags)
            #expect(beacon.activityType == .known(Fixture.browse))
            #expect(beacon.typeHash == Fixture.browse.hash(for: Fixture.accountA))
            #expect(beacon.epoch == Fixture.epoch)
            #expect(encoder.isOwn(beacon))
            #expect(encoder.currentOrigin(for: Fixture.accountA.id) == beacon.origin)
        }
    }

    @Test("Types no local app declared resolve as unknown, with their hash")
    func unknownType() throws {
        var recognizer = Self.recognizer()
        let hash = Fixture.edit.hash(for: Fixture.accountA)
        var fields = Fixture.fields()
        fields.typeHash = hash
        let beacon = try recognizer.recognize(Self.seal(fields), now: Fixture.now)
        #expect(beacon.activityType == .unknown(hash))
    }

    @Test("Too short: empty and truncated payloads", arguments: [0, 1, 5, 23])
    func tooShort(length: Int) {
        var recognizer = Self.recognizer()
        let payload = Array(Self.seal().prefix(length))
        #expect(Self.rejection(payload, &recognizer) == .tooShort(length: length))
    }

    @Test("Too long: trailing bytes", arguments: [25, 31, 64])
    func tooLong(length: Int) {
        var recognizer = Self.recognizer()
        let payload = Self.seal() + [UInt8](repeating: 0, count: length - 24)
        #expect(Self.rejection(payload, &recognizer) == .tooLong(length: length))
    }

    @Test("Unknown versions are reported as such, whatever the length", arguments: [0, 2, 3, 7, 15])
    func unsupportedVersion(version: UInt8) {
        var recognizer = Self.recognizer()
        var payload = Self.seal()
        payload[0] = version << 4 | payload[0] & 0x0f
        #expect(Self.rejection(payload, &recognizer) == .unsupportedVersion(version))
        #expect(Self.rejection(Array(payload.prefix(3)), &recognizer) == .unsupportedVersion(version))
        #expect(Self.rejection(payload + [1, 2], &recognizer) == .unsupportedVersion(version))
    }

    @Test("A stranger's beacon and random bytes have an unknown tag")
    func unknownTag() {
        var recognizer = Self.recognizer()
        #expect(Self.rejection(Self.seal(Fixture.fields(account: Fixture.accountB), account: Fixture.accountB), &recognizer) == .unknownTag)
        var generator = SeededGenerator(seed: 9)
        for _ in 0..<1000 {
            var payload = (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }
            payload[0] = 0x10 | payload[0] & 0x0f
            #expect(Self.rejection(payload, &recognizer) == .unknownTag)
        }
        var noAccounts = Self.recognizer([])
        #expect(Self.rejection(Self.seal(), &noAccounts) == .unknownTag)
        var tagChanged = Self.seal()
        tagChanged[2] ^= 0x40
        #expect(Self.rejection(tagChanged, &recognizer) == .unknownTag)
    }

    @Test("Any change outside the tag fails authentication (forgery)", arguments: [0, 5, 6, 7] + Array(8..<24))
    func badMAC(position: Int) {
        var recognizer = Self.recognizer()
        var payload = Self.seal()
        // Flip a low bit (position 0: inside the random nibble, so the version stays 1).
        payload[position] ^= 0x01
        #expect(Self.rejection(payload, &recognizer) == .authenticationFailed)
        // The genuine beacon is still accepted afterwards: failures record nothing.
        #expect(Self.rejection(Self.seal(), &recognizer) == nil)
    }

    @Test("A beacon moved to another slot's tag fails authentication")
    func tagOfAnotherSlot() {
        var recognizer = Self.recognizer()
        var payload = Self.seal(Fixture.fields(slot: 3))
        let otherTag = Self.seal(Fixture.fields(slot: 4))[1..<5]
        payload.replaceSubrange(1..<5, with: otherTag)
        #expect(Self.rejection(payload, &recognizer) == .authenticationFailed)
    }

    @Test("Epochs: ±1 accepted, ±2 reported too old/new, further unknown", arguments: -4...4)
    func epochWindow(offset: Int64) {
        var recognizer = Self.recognizer()
        let beaconEpoch = Fixture.epoch.advanced(by: offset)
        let rejection = Self.rejection(Self.seal(Fixture.fields(epoch: beaconEpoch)), &recognizer)
        switch offset {
        case -1...1: #expect(rejection == nil)
        case -2: #expect(rejection == .epochTooOld(beacon: beaconEpoch, current: Fixture.epoch))
        case 2: #expect(rejection == .epochTooNew(beacon: beaconEpoch, current: Fixture.epoch))
        default: #expect(rejection == .unknownTag)
        }
    }

    @Test("The window follows the clock: the table is rebuilt when the epoch changes")
    func windowMoves() throws {
        var recognizer = Self.recognizer()
        let old = Self.seal(Fixture.fields(epoch: Fixture.epoch, sequence: 1))
        let older = Self.seal(Fixture.fields(epoch: Fixture.epoch, sequence: 2))
        _ = try recognizer.recognize(old, now: Fixture.now)
        #expect(recognizer.currentEpoch == Fixture.epoch)
        // One epoch later the old epoch is still accepted...
        let next = Fixture.seconds(in: Fixture.epoch.advanced(by: 1))
        _ = try recognizer.recognize(older, now: next)
        #expect(recognizer.currentEpoch == Fixture.epoch.advanced(by: 1))
        // ...two epochs later it is too old, and its replay state is gone.
        let later = Fixture.seconds(in: Fixture.epoch.advanced(by: 2))
        let third = Self.seal(Fixture.fields(epoch: Fixture.epoch, sequence: 3))
        #expect(Self.rejection(third, &recognizer, now: later) == .epochTooOld(beacon: Fixture.epoch, current: Fixture.epoch.advanced(by: 2)))
        #expect(recognizer.replayWindow.count == 0)
        // Explicit refresh is idempotent.
        recognizer.refresh(now: later)
        #expect(recognizer.currentEpoch == Fixture.epoch.advanced(by: 2))
    }

    @Test("A replayed beacon is rejected, naming its origin and sequence")
    func replay() throws {
        var recognizer = Self.recognizer()
        let payload = Self.seal()
        let first = try recognizer.recognize(payload, now: Fixture.now)
        #expect(Self.rejection(payload, &recognizer) == .replayed(origin: first.origin, sequence: 0x1234))
        #expect(Self.rejection(payload, &recognizer, now: Fixture.now + 200) == .replayed(origin: first.origin, sequence: 0x1234))
        // The same sequence number with other random bytes (salt) is still a replay.
        var fields = Fixture.fields()
        fields.salt = 0x000001
        #expect(Self.rejection(Self.seal(fields), &recognizer) == .replayed(origin: first.origin, sequence: 0x1234))
        // The next sequence number, or another device, is fresh.
        #expect(Self.rejection(Self.seal(Fixture.fields(sequence: 0x1235)), &recognizer) == nil)
        #expect(Self.rejection(Self.seal(Fixture.fields(device: 7)), &recognizer) == nil)
    }

    @Test("Adding and removing accounts")
    func accounts() throws {
        var recognizer = Self.recognizer([])
        recognizer.refresh(now: Fixture.now)
        #expect(Self.rejection(Self.seal(), &recognizer) == .unknownTag)
        recognizer.add(Fixture.accountA)
        recognizer.add(Fixture.accountB)
        recognizer.add(Fixture.accountA)  // replaces, does not duplicate
        #expect(recognizer.knownAccounts.map(\.id) == [Fixture.accountA.id, Fixture.accountB.id])
        #expect(Self.rejection(Self.seal(), &recognizer) == nil)
        recognizer.remove(Fixture.accountA.id)
        #expect(Self.rejection(Self.seal(Fixture.fields(sequence: 9)), &recognizer) == .unknownTag)
        #expect(recognizer.knownAccounts.map(\.id) == [Fixture.accountB.id])
    }

    @Test("Recognition with many accounts finds the right one")
    func manyAccounts() throws {
        var generator = SeededGenerator(seed: 11)
        let accounts = try (0..<300).map { try AccountKey.generate(name: "account \($0)", using: &generator) }
        var recognizer = BeaconRecognizer(accounts: accounts)
        for (index, account) in accounts.enumerated() where index % 37 == 0 {
            let payload = Self.seal(Fixture.fields(slot: UInt8(index % 8), account: account), account: account)
            #expect(try recognizer.recognize(payload, now: Fixture.now).account == account.id)
        }
    }

    @Test("Only a tag match leads to cryptography: one MAC per beacon with 1 or 1,000 accounts, none for a stranger")
    func constantCryptoPerBeacon() throws {
        var generator = SeededGenerator(seed: 21)
        let many = try (0..<999).map { try AccountKey.generate(name: "account \($0)", using: &generator) } + [Fixture.accountA]
        for accounts in [[Fixture.accountA], many] {
            var recognizer = Self.recognizer(accounts)
            recognizer.refresh(now: Fixture.now)
            for sequence in UInt16(1)...20 {
                let before = recognizer.macEvaluations
                #expect(Self.rejection(Self.seal(Fixture.fields(sequence: sequence)), &recognizer) == nil)
                #expect(recognizer.macEvaluations - before == 1, "\(accounts.count) accounts")
            }
            // Strangers' beacons and random bytes: a table probe, no MAC.
            let before = recognizer.macEvaluations
            for _ in 0..<200 {
                var payload = (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }
                payload[0] = 0x10 | payload[0] & 0x0f
                #expect(Self.rejection(payload, &recognizer) == .unknownTag)
            }
            #expect(Self.rejection(Self.seal(Fixture.fields(account: Fixture.accountB), account: Fixture.accountB), &recognizer) == .unknownTag)
            #expect(recognizer.macEvaluations == before)
        }
    }

    @Test("Rejections describe themselves")
    func descriptions() {
        let origin = BeaconOrigin(account: Fixture.accountA.id, epoch: Fixture.epoch, device: DeviceID(rawValue: 1))
        let cases: [BeaconRejection] = [
            .tooShort(length: 3), .tooLong(length: 30), .unsupportedVersion(2), .unknownTag, .authenticationFailed,
            .epochTooOld(beacon: Fixture.epoch, current: Fixture.epoch.advanced(by: 2)),
            .epochTooNew(beacon: Fixture.epoch.advanced(by: 2), current: Fixture.epoch), .replayed(origin: origin, sequence: 5),
        ]
        let texts = cases.map(\.description)
        #expect(Set(texts).count == cases.count)
        #expect(texts[0].contains("3 bytes"))
        #expect(texts[2].contains("version 2"))
        #expect(texts[7].contains("sequence 5") && texts[7].contains(Fixture.accountA.id.description))
    }
}

@Suite struct RecognitionTableTests {
    @Test("Entries sharing a tag are all returned; lookups survive growth")
    func collisions() {
        var table = RecognitionTable()
        for index in 0..<1000 {
            table.insert(tag: UInt32(index % 100), entry: .init(account: index, epochOffsetIndex: index % 5, slot: index % 8))
        }
        #expect(table.count == 1000)
        var found: [Int] = []
        table.forEach(tag: 42) { entry in
            found.append(entry.account)
            #expect(entry.epochOffsetIndex == entry.account % 5 && Int(entry.slot) == entry.account % 8)
            return true
        }
        #expect(found.sorted() == Array(stride(from: 42, to: 1000, by: 100)))
        var stopped = 0
        table.forEach(tag: 42) { _ in
            stopped += 1
            return false
        }
        #expect(stopped == 1)
        var none = 0
        table.forEach(tag: 100_000) { _ in
            none += 1
            return true
        }
        #expect(none == 0)
    }
}
