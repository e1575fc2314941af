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
                Self.beacon(device: device), rssi: -50, device: nil,
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
            Self.beacon(device: 1, epoch: 100), rssi: nil, device: nil, wallClock: Date(), now: now)
        guard case .appeared(let entry) = first else {
            Issue.record("expected appeared, got \(first)")
            return
        }
        let (second, _) = registry.record(
            Self.beacon(device: 2, epoch: 101), rssi: nil, device: nil, wallClock: Date(), now: now)
        guard case .updated(let continued) = second else {
            Issue.record("expected the entry to carry over the rotation, got \(second)")
            return
        }
        #expect(continued.id == entry.id)
        #expect(continued.origin.device == DeviceID(rawValue: 2))
        #expect(registry.count == 1)
        // Two epochs later is no continuation: a new entry.
        let (third, _) = registry.record(
            Self.beacon(device: 3, epoch: 103), rssi: nil, device: nil, wallClock: Date(), now: now)
        if case .appeared = third {} else { Issue.record("expected a new entry, got \(third)") }
    }

    @Test func entriesExpireAndRSSIIsSmoothed() {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(10), rssiSmoothing: 0.5, idSalt: 1)
        let start = ContinuousClock.now
        _ = registry.record(Self.beacon(device: 1), rssi: -40, device: nil, wallClock: Date(), now: start)
        let origin = Self.beacon(device: 1).origin
        let refreshed = registry.heardAgain(origin, rssi: -60, device: nil, wallClock: Date(), now: start + .seconds(5))
        #expect(refreshed?.rssi == -50)
        #expect(registry.heardAgain(origin, rssi: 127, device: nil, wallClock: Date(), now: start + .seconds(5))?.rssi == -50)
        #expect(registry.expire(now: start + .seconds(14)).isEmpty)
        #expect(registry.expire(now: start + .seconds(15)).count == 1)
        #expect(registry.count == 0)
    }

    @Test func aChangeOfFlagsIsAnUpdate() {
        var registry = NearbyRegistry(capacity: 8, expiry: .seconds(45), idSalt: 1)
        let now = ContinuousClock.now
        _ = registry.record(Self.beacon(device: 1), rssi: nil, device: nil, wallClock: Date(), now: now)
        let (same, _) = registry.record(Self.beacon(device: 1, sequence: 2), rssi: nil, device: nil, wallClock: Date(), now: now)
        if case .refreshed = same {} else { Issue.record("expected refreshed, got \(same)") }
        let (changed, _) = registry.record(
            Self.beacon(device: 1, flags: .hasWebpageURL, sequence: 3), rssi: nil, device: nil, wallClock: Date(), now: now)
        if case .updated(let entry) = changed {
            #expect(entry.flags == .hasWebpageURL)
        } else {
            Issue.record("expected updated, got \(changed)")
        }
    }
}
