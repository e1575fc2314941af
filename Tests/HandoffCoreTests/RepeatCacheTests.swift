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
        var cache = RepeatCache()
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
        // The same bytes again: replaced, not stored twice.
        payload.withUnsafeBytes { cache.insert($0.baseAddress!, fields: Fixture.fields(sequence: 9), account: 5) }
        #expect(cache.count == 1)
        #expect(Self.lookup(cache, payload)?.account == 5)
        // Same home slot (same MAC bytes), other contents: both are kept.
        var sameSlot = Self.payload(2)
        sameSlot.replaceSubrange(BeaconFormat.macOffset..., with: payload[BeaconFormat.macOffset...])
        sameSlot.withUnsafeBytes { cache.insert($0.baseAddress!, fields: Fixture.fields(sequence: 7), account: 4) }
        #expect(cache.count == 2)
        #expect(Self.lookup(cache, payload)?.account == 5)
        #expect(Self.lookup(cache, sameSlot)?.account == 4)
        cache.removeAll()
        #expect(cache.count == 0)
        #expect(Self.lookup(cache, sameSlot) == nil)
        #expect(Self.lookup(cache, payload) == nil)
    }

    @Test("Many devices taking turns all stay cached: it grows, and no payload pushes out another")
    func manyDevicesStayCached() {
        var cache = RepeatCache()
        let payloads = (0..<1000).map { Self.payload(UInt64(100 + $0)) }
        for (index, payload) in payloads.enumerated() {
            payload.withUnsafeBytes { cache.insert($0.baseAddress!, fields: Fixture.fields(), account: index) }
        }
        #expect(cache.count == 1000)
        #expect(cache.capacity >= 2000)
        // A direct-mapped cache of 1024 slots lost about 6 in 10 of these to collisions.
        let found = payloads.enumerated().filter { Self.lookup(cache, $1)?.account == $0 }.count
        #expect(found == 1000)
    }

    @Test("At its largest it empties itself rather than grow or fill, and keeps working")
    func boundedSize() {
        var cache = RepeatCache(maximumCapacity: 16)
        #expect(cache.capacity == 16)
        let payloads = (0..<20).map { Self.payload(UInt64(500 + $0)) }
        for (index, payload) in payloads.enumerated() {
            payload.withUnsafeBytes { cache.insert($0.baseAddress!, fields: Fixture.fields(), account: index) }
            #expect(cache.count <= 8)
            #expect(Self.lookup(cache, payload)?.account == index)
        }
        #expect(cache.capacity == 16)
        // The 17th emptied it: payloads 16 to 19 are held, the earlier ones are not.
        #expect(cache.count == 4)
        #expect(Self.lookup(cache, payloads[0]) == nil)
        #expect(Self.lookup(cache, payloads[19])?.account == 19)
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

    @Test("A thousand devices heard in turn cost one MAC each, however often they repeat")
    func thousandDevicesOneMacEach() throws {
        var recognizer = BeaconRecognizerTests.recognizer()
        let payloads = (0..<1000).map {
            BeaconRecognizerTests.seal(Fixture.fields(slot: UInt8($0 % 8), device: 0x1000_0000 + UInt32($0)))
        }
        for round in 0..<3 {
            for payload in payloads {
                let rejection = BeaconRecognizerTests.rejection(payload, &recognizer)
                if round == 0 { #expect(rejection == nil) } else { #expect(rejection != nil) }
            }
        }
        #expect(recognizer.macEvaluations == 1000)
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
