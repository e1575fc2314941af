import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol

/// The activities of our other devices that are nearby: recognition of their
/// beacons among the scan reports, the registry with its expiry, and the
/// counters that `status` shows.
///
/// Each change comes back as events for the clients (`appeared`, `updated`,
/// `lost`); the daemon decides who may see them.
struct NearbyActivities: Sendable {
    typealias Event = (name: EventName, entry: NearbyEntry)

    private(set) var registry: NearbyRegistry
    private var recognizer: BeaconRecognizer
    /// Beacons of our accounts accepted, and advertisements refused (strangers', malformed).
    private(set) var recognized: UInt64 = 0
    private(set) var rejected: UInt64 = 0
    /// Beacons of our accounts that did not keep a listed activity nearby: copies
    /// (from a second address, older than the newest, or stale; `NearbyRegistry.Copy`).
    private(set) var copies: UInt64 = 0
    /// Scan reports taken, whatever became of them.
    private(set) var heard: UInt64 = 0
    /// Wakes the daemon at the next expiry.
    var timer = OneShotTimer()
    /// Retired account keys (after a device removal, docs/devices.md section 7): recognised only
    /// to find the devices still waiting for the new key; their beacons are never listed.
    private(set) var retired: Set<AccountID> = []

    init(configuration: BeaconConfiguration, accounts: [AccountKey], capacity: Int, expiry: Duration) {
        // Our devices share the expiry, so the origin renews its beacon every
        // renewal interval; a beacon first heard longer ago than that is stale.
        registry = NearbyRegistry(
            capacity: capacity, expiry: expiry, freshness: Advertiser.renewalInterval(expiry: expiry))
        recognizer = BeaconRecognizer(configuration: configuration, accounts: accounts)
    }

    /// The entry `id`, if it is still nearby.
    func entry(_ id: String) -> NearbyEntry? { registry.entry(id) }

    /// Names an entry's origin device; returns the entry when that changed it.
    mutating func setDevice(_ id: String, name: String, fingerprint: String) -> NearbyEntry? {
        registry.setDevice(id, name: name, fingerprint: fingerprint)
    }

    /// Counts a scan report that another part of the daemon took (a pairing
    /// advertisement), so that `heard` holds every report taken.
    mutating func countHeard() { heard += 1 }

    /// Takes one scan report; `isOwn` tells our own beacons (heard back) apart.
    mutating func hear(
        _ report: AdvertisementReport, isOwn: (RecognizedBeacon) -> Bool, now: Double, instant: ContinuousClock.Instant,
        retiredHeard: (RecognizedBeacon) -> Void = { _ in }
    ) -> [Event] {
        heard += 1
        let wallClock = Date(timeIntervalSince1970: now)
        let beacon: RecognizedBeacon
        do {
            beacon = try recognizer.recognize(report.data, now: now)
        } catch .replayed(let origin, let sequence) {
            // bluetoothd reports an unchanged advertisement again: still nearby,
            // unless it is a copy (the registry decides).
            let change = registry.repeatHeard(
                origin, sequence: sequence, rssi: report.rssi, device: report.device.rawValue,
                address: report.address, wallClock: wallClock, now: instant)
            if case .copy = change { copies += 1 }
            return []
        } catch {
            rejected += 1
            return []
        }
        if isOwn(beacon) { return [] }
        if retired.contains(beacon.origin.account) {
            retiredHeard(beacon)
            return []
        }
        let (change, evicted) = registry.record(
            beacon, rssi: report.rssi, device: report.device.rawValue, address: report.address,
            wallClock: wallClock, now: instant)
        if case .copy = change {
            copies += 1
        } else {
            recognized += 1
        }
        var events: [Event] = evicted.map { [(.lost, $0)] } ?? []
        switch change {
        case .appeared(let entry): events.append((.appeared, entry))
        case .updated(let entry): events.append((.updated, entry))
        case .refreshed, .copy: break
        }
        return events
    }

    /// Removes the entries whose expiry has passed.
    mutating func expire(now: ContinuousClock.Instant) -> [NearbyEntry] { registry.expire(now: now) }

    /// Recognises the beacons of `accounts` from now on; returns the entries of accounts that went.
    mutating func use(accounts: [AccountKey], retired retiredKeys: [AccountKey] = [], declared: Set<ActivityType>)
        -> [NearbyEntry]
    {
        let current = Set(accounts.map(\.id))
        let extra = retiredKeys.filter { !current.contains($0.id) }
        retired = Set(extra.map(\.id))
        recognizer = BeaconRecognizer(configuration: recognizer.configuration, accounts: accounts + extra)
        recognizer.declareActivityTypes(declared)
        return registry.retainAccounts(Set(accounts.map(\.id)))
    }

    /// Resolves type hashes through newly declared types; returns the entries that now have a name.
    mutating func declare(_ declared: Set<ActivityType>, accounts: [AccountKey]) -> [NearbyEntry] {
        recognizer.declareActivityTypes(declared)
        var updated: [NearbyEntry] = []
        for entry in registry.all {
            guard case .unknown(let hash) = entry.activityType,
                let key = accounts.first(where: { $0.id == entry.account })
            else { continue }
            let resolved = ActivityTypeResolver(account: key, declaredTypes: declared).resolve(hash)
            if case .known = resolved, let changed = registry.updateType(entry.id, to: resolved) {
                updated.append(changed)
            }
        }
        return updated
    }
}

extension NearbyEntry {
    /// The protocol's view of the entry.
    var wire: NearbyActivity {
        NearbyActivity(
            id: id, account: accountName, device: origin.device.description, deviceName: deviceName,
            deviceFingerprint: deviceFingerprint, type: activityType.type?.rawValue,
            typeHash: typeHash.description, hasPayload: flags.contains(.hasPayload),
            hasWebpageURL: flags.contains(.hasWebpageURL), supportsStreams: flags.contains(.supportsStreams),
            rssi: rssi.map { ($0 * 10).rounded() / 10 }, firstSeen: firstSeen, lastSeen: lastSeen)
    }
}
