import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore

/// The beacon this machine wants on the air: its current activity, under the
/// account of the user who published it.
struct WantedBeacon: Sendable {
    let account: AccountKey
    let activity: String
    let type: ActivityType
    var flags: BeaconFlags
}

/// Decides what handoffd advertises, and when it must decide again.
///
/// Every user's current activity goes on the air under that user's account,
/// each in an advertising slot of its own (slot 0, 1, …: an account keeps its
/// slot while it stays on the air; a new one takes the lowest free slot, so
/// when the adapter runs short of instances, the newest are the ones left off).
///
/// It owns the beacon encoder and the two inputs: the wanted beacons (from the
/// local activities) and the `AdvertisingPolicy` (from the privacy check).
/// A beacon is rotated at each epoch boundary, and renewed within the epoch
/// every third of the nearby expiry: bluetoothd reports an unchanged
/// advertisement to scanners only now and then, so receivers learn that the
/// activity is still there from fresh beacons.
///
/// Pure bookkeeping: the daemon hands the result to the radio and sets the timer.
struct Advertiser: Sendable {
    /// What one decision changed.
    struct Decision {
        /// What the radio should have on the air now, one per slot (empty: nothing).
        var onAir: [RadioAdvertisement] = []
        /// Freshly encoded beacons, which the origin side must know before they go out.
        var fresh: [(payload: [UInt8], account: AccountKey, activity: String)] = []
        /// Lines for the log when what is advertised changed in kind.
        var notes: [String] = []
        /// When to decide again (the next renewal or epoch boundary); nil: no need.
        var next: ContinuousClock.Instant?
    }

    /// One account's beacon on the air.
    private struct Advertised {
        var slot: Int
        var type: ActivityType
        var flags: BeaconFlags
        var epoch: UInt64
        var payload: [UInt8]
        /// When it is due to be renewed.
        var renewal: ContinuousClock.Instant
    }

    private(set) var encoder: BeaconEncoder
    private(set) var policy = AdvertisingPolicy.unchecked
    let renewalInterval: Duration
    /// What is on the air now, by account.
    private var advertised: [AccountID: Advertised] = [:]
    /// Wakes the daemon for the next decision.
    var timer = OneShotTimer()
    /// Set when handoffd stops: nothing goes on the air again, whatever changes later
    /// (a client's disconnection during shutdown must not register a beacon anew).
    private var retired = false

    /// - Parameter cardDigest: this device's card digest, from which the beacons'
    ///   device identifiers are partly derived (docs/devices.md).
    init(configuration: BeaconConfiguration, expiry: Duration, cardDigest: [UInt8]? = nil) {
        encoder = BeaconEncoder(configuration: configuration)
        encoder.cardDigest = cardDigest
        renewalInterval = Self.renewalInterval(expiry: expiry)
    }

    /// How often the beacon is renewed within an epoch: a third of the nearby
    /// expiry (devices of one account share it), so that a receiver hears a
    /// fresh beacon at least twice before it would forget the activity; at
    /// least a second.
    static func renewalInterval(expiry: Duration) -> Duration {
        max(.seconds(1), expiry / 3)
    }

    /// Whether `beacon` is one of ours (this epoch or the one before).
    func isOwn(_ beacon: RecognizedBeacon) -> Bool { encoder.isOwn(beacon) }

    /// The slot that carries `account`'s beacon, if it is advertised.
    func slot(of account: AccountID) -> Int? { advertised[account]?.slot }

    /// Decides for `wanted` (at most one beacon per account; the first of an
    /// account counts) at wall-clock time `now` (seconds) and monotonic `instant`.
    mutating func decide(_ wanted: [WantedBeacon], now: Double, instant: ContinuousClock.Instant) -> Decision {
        var decision = Decision()
        var seen = Set<AccountID>()
        let beacons = retired ? [] : wanted.filter { seen.insert($0.account.id).inserted }
        let hadBeacons = !advertised.isEmpty
        // Accounts no longer wanted leave the air, and free their slots.
        advertised = advertised.filter { seen.contains($0.key) }
        guard !beacons.isEmpty else {
            if hadBeacons { decision.notes.append("nothing current: not advertising") }
            return decision
        }
        let epoch = encoder.configuration.epoch(containing: now)
        var next = nextDecision(epochEnd: Double(epoch.endSeconds), now: now, instant: instant)
        // Connectable advertising says so in the beacon: receivers then may connect to introduce themselves.
        let reachable: BeaconFlags = policy.type == .peripheral ? .reachable : []
        for wanted in beacons {
            var beacon = wanted
            beacon.flags.formUnion(reachable)
            let account = beacon.account.id
            if let current = advertised[account], current.type == beacon.type, current.flags == beacon.flags,
                current.epoch == epoch.index, instant < current.renewal
            {
                next = min(next, current.renewal)
                continue
            }
            let payload = encoder.encode(
                account: beacon.account, activityType: beacon.type, flags: beacon.flags, now: now)
            let changedInKind = advertised[account].map { $0.type != beacon.type || $0.flags != beacon.flags } ?? true
            if changedInKind {
                decision.notes.append("advertising \(beacon.type) for account \(beacon.account.name)")
            }
            // An account keeps its slot; a new one takes the lowest free slot.
            let slot = advertised[account]?.slot ?? freeSlot()
            advertised[account] = Advertised(
                slot: slot, type: beacon.type, flags: beacon.flags, epoch: epoch.index, payload: payload,
                renewal: instant + renewalInterval)
            decision.fresh.append((payload, beacon.account, beacon.activity))
            next = min(next, instant + renewalInterval)
        }
        decision.onAir = onAir()
        decision.next = next
        return decision
    }

    /// Takes a new policy; returns what the radio should have on the air now.
    mutating func apply(_ policy: AdvertisingPolicy) -> [RadioAdvertisement] {
        self.policy = policy
        return retired ? [] : onAir()
    }

    /// Off the air for good (handoffd is stopping).
    mutating func retire() {
        retired = true
        advertised = [:]
        timer.cancel()
    }

    private func onAir() -> [RadioAdvertisement] {
        guard policy.advertise else { return [] }
        return advertised.values.sorted { $0.slot < $1.slot }.map {
            RadioAdvertisement(payload: $0.payload, type: policy.type, slot: $0.slot)
        }
    }

    /// The lowest slot no account has.
    private func freeSlot() -> Int {
        let taken = Set(advertised.values.map(\.slot))
        var slot = 0
        while taken.contains(slot) { slot += 1 }
        return slot
    }

    /// The epoch boundary (plus 10 ms, to be past it) or the renewal, whichever comes first.
    private func nextDecision(epochEnd: Double, now: Double, instant: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let untilBoundary = Duration.milliseconds(Int64((max(0, epochEnd - now) + 0.01) * 1000))
        return instant + min(untilBoundary, renewalInterval)
    }
}
