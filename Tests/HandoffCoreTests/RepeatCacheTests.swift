import Testing
@testable import HandoffCore

@Suite struct RepeatCacheTests {
    static func payload(_ seed: UInt64) -> [UInt8] {
        var generator = SeededGenerator(seed: seed)
        return (0..<BeaconFormat.payloadLength).map { _ in UInt8.random(in: 0...255, using: &generator) }
    }

    static func lookup(_ cache: RepeatCache, _ payload: [UInt8]) -> (fields: BeaconFields, account: Int)? {
        payload.withUnsafeBytes { cache.lookup($0.baseAddress!) }
    }

    @Test("A hit needs all 24 bytes equal; storing, replacing and emptying")
    func exactMatchOnly() {
        var cache = RepeatCache(capacity: 16)
        let payload = Self.payload(1)
        #expect(Self.lookup(cache, payload) == nil)
        payload.withUnsafeBytes { cache.insert($0.baseAddress!, fields: Fixture.fields(), account: 3) }
        #expect(cache.count == 1)
        let hit = Self.lookup(cache, payload)
        #expect(hit?.fields == Fixture.fields() && hit?.account == 3)
        for position in 0..<BeaconFormat.payloadLength {
            var changed = payload
            changed[position] ^= 0x01
            #expect(Self.lookup(cache, changed) == nil, "byte \(position) changed")
        }
        // Same slot (same MAC bytes), other contents: replaces the entry.
        var sameSlot = Self.payload(2)
        sameSlot.replaceSubrange(BeaconFormat.macOffset..., with: payload[BeaconFormat.macOffset...])
        sameSlot.withUnsafeBytes { cache.insert($0.baseAddress!, fields: Fixture.fields(sequence: 7), account: 4) }
        #expect(cache.count == 1)
        #expect(Self.lookup(cache, payload) == nil)
        #expect(Self.lookup(cache, sameSlot)?.account == 4)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(Self.lookup(cache, sameSlot) == nil)
    }

    @Test("A repeat heard again is still a replay, from the cache as from the MAC")
    func repeatIsReplay() throws {
        var recognizer = BeaconRecognizerTests.recognizer()
        let payload = BeaconRecognizerTests.seal()
        let first = try recognizer.recognize(payload, now: Fixture.now)
        for _ in 0..<3 {
            #expect(BeaconRecognizerTests.rejection(payload, &recognizer) == .replayed(origin: first.origin, sequence: 0x1234))
        }
    }

    @Test("After the epoch moves, a cached beacon is judged by the new table, not the cache")
    func epochChangeEmptiesCache() throws {
        var recognizer = BeaconRecognizerTests.recognizer()
        let payload = BeaconRecognizerTests.seal()
        _ = try recognizer.recognize(payload, now: Fixture.now)
        // Three epochs later the beacon's tag is not in the table at all. A
        // stale cache would answer "too old" (from the cached epoch) instead.
        let later = Fixture.seconds(in: Fixture.epoch.advanced(by: 3))
        #expect(BeaconRecognizerTests.rejection(payload, &recognizer, now: later) == .unknownTag)
    }

    @Test("After an account is removed, its cached beacon is unknown, and others map to the right account")
    func accountChangeEmptiesCache() throws {
        var recognizer = BeaconRecognizerTests.recognizer([Fixture.accountA, Fixture.accountB])
        let fromA = BeaconRecognizerTests.seal()
        let fromB = BeaconRecognizerTests.seal(Fixture.fields(account: Fixture.accountB), account: Fixture.accountB)
        _ = try recognizer.recognize(fromA, now: Fixture.now)
        _ = try recognizer.recognize(fromB, now: Fixture.now)
        recognizer.remove(Fixture.accountA.id)
        #expect(BeaconRecognizerTests.rejection(fromA, &recognizer) == .unknownTag)
        // B is now account index 0: a stale entry would still say index 1.
        var again = BeaconRecognizer(accounts: [Fixture.accountB, Fixture.accountA])
        _ = try again.recognize(fromA, now: Fixture.now)
        again.remove(Fixture.accountB.id)
        let beacon = try again.recognize(BeaconRecognizerTests.seal(Fixture.fields(sequence: 0x1235)), now: Fixture.now)
        #expect(beacon.account == Fixture.accountA.id)
        guard case .replayed(let origin, _) = BeaconRecognizerTests.rejection(fromA, &again) else {
            Issue.record("a repeat after the rebuild should be a replay")
            return
        }
        #expect(origin.account == Fixture.accountA.id)
    }
}
