import Foundation
import HandoffCore
import HandoffDaemon
import Testing

@Suite struct NearbyRegistryTests {
    static let account = AccountID(rawValue: 0x1234)
    static let type = ResolvedActivityType.unknown(ActivityTypeHash(rawValue: 0xAABB_CCDD))

    static func beacon(device: UInt32, epoch: UInt64 = 100, flags: BeaconFlags = [], sequence: UInt16 = 1)
        -> RecognizedBeacon
    {
        let fields = BeaconFields(
            headerNibble: 0, epoch: Epoch(index: epoch, length: 600), slot: 0, salt: 0,
            typeHash: ActivityTypeHash(rawValue: 0xAABB_CCDD), flags: flags, sequence: sequence,
            device: DeviceID(rawValue: device))
        return RecognizedBeacon(account: account, accountName: "me", fields: fields, activityType: type, tag: 0x0102_0304)
    }

    @Test func theCapEvictsTheLeastRecentlySeen() {
        var registry = NearbyRegistry(capacity: 3, expiry: .seconds(45), idSalt: 1)
        let now = ContinuousClock.now
        var evicted: [NearbyEntry] = []
        for device in 0..<10 as Range<UInt32> {
            let (_, gone) = registry.record(
                Self.beacon(device: device), rssi: -50, device: nil, address: "A",
                wallClock: Date(timeIntervalSince1970: Double(device)), now: now)
            if let gone { evicted.append(gone) }
        }
        #expect(registry.count == 3)
        #expect(evicted.count == 7)
        #expect(Set(registry.all.map(\.origin.device.rawValue)) == [7, 8, 9])
    }

    @Test func aBeaconFromTheNextEpochContinuesTheSameEntry() {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(45), idSalt: 1)
        let now = ContinuousClock.now
        let (first, _) = registry.record(
            Self.beacon(device: 1, epoch: 100), rssi: nil, device: nil, address: "A", wallClock: Date(), now: now)
        guard case .appeared(let entry) = first else {
            Issue.record("expected appeared, got \(first)")
            return
        }
        let (second, _) = registry.record(
            Self.beacon(device: 2, epoch: 101), rssi: nil, device: nil, address: "A", wallClock: Date(), now: now)
        guard case .updated(let continued) = second else {
            Issue.record("expected the entry to carry over the rotation, got \(second)")
            return
        }
        #expect(continued.id == entry.id)
        #expect(continued.origin.device == DeviceID(rawValue: 2))
        #expect(registry.count == 1)
        // Two epochs later is no continuation: a new entry.
        let (third, _) = registry.record(
            Self.beacon(device: 3, epoch: 103), rssi: nil, device: nil, address: "A", wallClock: Date(), now: now)
        if case .appeared = third {} else { Issue.record("expected a new entry, got \(third)") }
    }

    @Test func entriesExpireAndRSSIIsSmoothed() {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(10), rssiSmoothing: 0.5, idSalt: 1)
        let start = ContinuousClock.now
        _ = registry.record(Self.beacon(device: 1), rssi: -40, device: nil, address: "A", wallClock: Date(), now: start)
        let origin = Self.beacon(device: 1).origin
        let refreshed = registry.heardAgain(
            origin, sequence: 1, rssi: -60, device: nil, address: "A", wallClock: Date(), now: start + .seconds(3))?.entry
        #expect(refreshed?.rssi == -50)
        #expect(registry.heardAgain(
            origin, sequence: 1, rssi: 127, device: nil, address: "A", wallClock: Date(), now: start + .seconds(3))?.entry.rssi == -50)
        #expect(registry.expire(now: start + .seconds(12)).isEmpty)
        #expect(registry.expire(now: start + .seconds(13)).count == 1)
        #expect(registry.count == 0)
    }

    @Test func aChangeOfFlagsIsAnUpdate() {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(45), idSalt: 1)
        let now = ContinuousClock.now
        _ = registry.record(Self.beacon(device: 1), rssi: nil, device: nil, address: "A", wallClock: Date(), now: now)
        let (same, _) = registry.record(Self.beacon(device: 1, sequence: 2), rssi: nil, device: nil, address: "A", wallClock: Date(), now: now)
        if case .refreshed = same {} else { Issue.record("expected refreshed, got \(same)") }
        let (changed, _) = registry.record(
            Self.beacon(device: 1, flags: .hasWebpageURL, sequence: 3), rssi: nil, device: nil, address: "A", wallClock: Date(), now: now)
        if case .updated(let entry) = changed {
            #expect(entry.flags == .hasWebpageURL)
        } else {
            Issue.record("expected updated, got \(changed)")
        }
    }

    /// The origin updates its activity just after a rotation, and the first beacon heard
    /// under the new identity already carries the new flags: it is still the same activity.
    @Test func anUpdateFirstHeardAfterARotationContinuesTheEntry() {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(45), idSalt: 1)
        let now = ContinuousClock.now
        let (first, _) = registry.record(
            Self.beacon(device: 1, epoch: 100), rssi: nil, device: nil, address: "A", wallClock: Date(), now: now)
        let (second, _) = registry.record(
            Self.beacon(device: 2, epoch: 101, flags: .hasWebpageURL), rssi: nil, device: nil, address: "B",
            wallClock: Date(), now: now)
        guard case .updated(let entry) = second else {
            Issue.record("expected the entry to carry over the rotation, got \(second)")
            return
        }
        #expect(entry.id == first.entry.id)
        #expect(entry.flags == .hasWebpageURL)
        #expect(registry.count == 1)
    }

    /// Two of the account's devices show the same type; one rotates: its new identity
    /// takes over the entry with its own flags, not the other device's.
    @Test func aRotationPrefersTheEntryWithTheSameFlags() {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(45), idSalt: 1)
        let now = ContinuousClock.now
        let (plain, _) = registry.record(
            Self.beacon(device: 1, epoch: 100), rssi: nil, device: nil, address: "A", wallClock: Date(), now: now)
        let (withURL, _) = registry.record(
            Self.beacon(device: 2, epoch: 100, flags: .hasWebpageURL), rssi: nil, device: nil, address: "B",
            wallClock: Date(timeIntervalSinceNow: 1), now: now)
        let (rotated, _) = registry.record(
            Self.beacon(device: 3, epoch: 101), rssi: nil, device: nil, address: "C",
            wallClock: Date(timeIntervalSinceNow: 2), now: now)
        #expect(rotated.entry.id == plain.entry.id)
        #expect(registry.entry(withURL.entry.id)?.origin.device == DeviceID(rawValue: 2))
    }

    // MARK: Copies (issue 19)

    /// A stranger re-advertises the entry's newest beacon from its own address: the
    /// entry is not refreshed, keeps the origin's Device1, and expires on time.
    @Test func theNewestBeaconFromASecondAddressIsACopy() throws {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(30), idSalt: 1)
        let start = ContinuousClock.now
        let beacon = Self.beacon(device: 1, sequence: 7)
        _ = registry.record(beacon, rssi: nil, device: "/dev_A", address: "A", wallClock: Date(), now: start)
        let copy = registry.heardAgain(
            beacon.origin, sequence: 7, rssi: -30, device: "/dev_S", address: "S", wallClock: Date(),
            now: start + .seconds(5))
        guard case .copy(let entry, .otherAddress) = copy else {
            Issue.record("expected a copy from another address, got \(String(describing: copy))")
            return
        }
        #expect(entry.expires == start + .seconds(30))
        #expect(entry.device == "/dev_A")
        #expect(registry.entry(for: beacon.origin)?.device == "/dev_A")
        #expect(registry.entry(for: beacon.origin)?.rssi == nil)
        // The origin's own repeats still count.
        let own = registry.heardAgain(
            beacon.origin, sequence: 7, rssi: nil, device: "/dev_A", address: "A", wallClock: Date(),
            now: start + .seconds(6))
        #expect(own?.entry.expires == start + .seconds(36))
        // Copies alone do not keep it: gone at the expiry after the last real hearing.
        _ = registry.heardAgain(
            beacon.origin, sequence: 7, rssi: nil, device: "/dev_S", address: "S", wallClock: Date(),
            now: start + .seconds(35))
        #expect(registry.expire(now: start + .seconds(36)).count == 1)
    }

    /// A beacon first heard longer than one renewal interval ago no longer refreshes,
    /// even from the address it came from (a stranger can send from any address).
    @Test func aBeaconFirstHeardOneRenewalAgoIsStale() {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(30), idSalt: 1)
        #expect(registry.freshness == .seconds(10))
        let start = ContinuousClock.now
        let beacon = Self.beacon(device: 1, sequence: 7)
        _ = registry.record(beacon, rssi: nil, device: nil, address: "A", wallClock: Date(), now: start)
        let fresh = registry.heardAgain(
            beacon.origin, sequence: 7, rssi: nil, device: nil, address: "A", wallClock: Date(),
            now: start + .seconds(10))
        #expect(fresh == .refreshed(registry.entry(for: beacon.origin)!))
        let stale = registry.heardAgain(
            beacon.origin, sequence: 7, rssi: nil, device: nil, address: "A", wallClock: Date(),
            now: start + .seconds(10) + .milliseconds(1))
        if case .copy(_, .stale) = stale {} else { Issue.record("expected stale, got \(String(describing: stale))") }
        #expect(registry.entry(for: beacon.origin)?.expires == start + .seconds(40))
        // A new beacon of the origin is fresh again.
        let (renewed, _) = registry.record(
            Self.beacon(device: 1, sequence: 8), rssi: nil, device: nil, address: "A2", wallClock: Date(),
            now: start + .seconds(11))
        #expect(renewed == .refreshed(registry.entry(for: beacon.origin)!))
        #expect(registry.entry(for: beacon.origin)?.beaconAddress == "A2")
    }

    /// Beacons older than the newest (in serial order, across the wrap) refresh nothing,
    /// whether the recognizer accepted them once or calls them replays.
    @Test func anOlderBeaconIsACopyAndTheNewestStays() {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(30), idSalt: 1)
        let start = ContinuousClock.now
        _ = registry.record(
            Self.beacon(device: 1, sequence: 0xFFFF), rssi: nil, device: nil, address: "A1", wallClock: Date(), now: start)
        let (wrapped, _) = registry.record(
            Self.beacon(device: 1, sequence: 0x0001), rssi: nil, device: nil, address: "A2", wallClock: Date(),
            now: start + .seconds(1))
        if case .refreshed = wrapped {} else { Issue.record("0x0001 is ahead of 0xFFFF, got \(wrapped)") }
        let (older, _) = registry.record(
            Self.beacon(device: 1, sequence: 0x0000), rssi: nil, device: nil, address: "S", wallClock: Date(),
            now: start + .seconds(2))
        guard case .copy(let entry, .older) = older else {
            Issue.record("expected an older copy, got \(older)")
            return
        }
        #expect(entry.sequence == 0x0001)
        #expect(entry.expires == start + .seconds(31))
        let replayed = registry.heardAgain(
            Self.beacon(device: 1).origin, sequence: 0xFFFF, rssi: nil, device: nil, address: "A1", wallClock: Date(),
            now: start + .seconds(3))
        if case .copy(_, .older) = replayed {} else { Issue.record("expected older, got \(String(describing: replayed))") }
        #expect(registry.entry(for: Self.beacon(device: 1).origin)?.expires == start + .seconds(31))
    }

    /// The bound the issue asks for: the origin renews every third of the expiry and
    /// then stops; a stranger repeats its newest beacon every 100 ms from the origin's
    /// own address and from another. The entry goes no later than the expiry plus one
    /// renewal interval after the origin stopped.
    @Test func copiesKeepAnEntryNoLongerThanTheExpiryPlusOneRenewal() throws {
        let expiry = Duration.seconds(30)
        let renewal = expiry / 3
        var registry = NearbyRegistry(capacity: 8, expiry: expiry, idSalt: 1)
        let start = ContinuousClock.now
        var sequence: UInt16 = 100
        var time = Duration.zero
        var newestAddress = ""
        // The origin: a new beacon from a new address every renewal, heard at once.
        while time <= .seconds(95) {
            newestAddress = "A\(sequence)"
            _ = registry.record(
                Self.beacon(device: 1, sequence: sequence), rssi: nil, device: nil, address: newestAddress,
                wallClock: Date(), now: start + time)
            sequence += 1
            time += renewal
        }
        let stopped = start + time - renewal + .milliseconds(500)
        let origin = Self.beacon(device: 1).origin
        var gone: ContinuousClock.Instant?
        var now = stopped
        while gone == nil, now < stopped + .seconds(300) {
            for address in [newestAddress, "S"] {
                _ = registry.heardAgain(
                    origin, sequence: sequence - 1, rssi: nil, device: nil, address: address, wallClock: Date(), now: now)
            }
            now += .milliseconds(100)
            if !registry.expire(now: now).isEmpty { gone = now }
        }
        let dropped = try #require(gone, "still listed 300 s after the origin stopped") - stopped
        #expect(dropped <= expiry + renewal, "listed \(dropped) after the origin stopped")
        print("copies: dropped \(dropped) after the origin stopped (bound \(expiry + renewal))")
    }
}
