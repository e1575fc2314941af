import BlueZ
import Foundation
import HandoffCore

/// The beacon this machine wants on the air: its current activity, under the
/// account of the user who published it.
struct WantedBeacon: Sendable {
    let account: AccountKey
    let activity: String
    let type: ActivityType
    let flags: BeaconFlags
}

/// Decides what handoffd advertises, and when it must decide again.
///
/// It owns the beacon encoder and the two inputs: the wanted beacon (from the
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
        /// What the radio should have on the air now (nil: nothing).
        var onAir: RadioAdvertisement?
        /// A freshly encoded beacon, which the origin side must know before it goes out.
        var fresh: (payload: [UInt8], account: AccountKey, activity: String)?
        /// A line for the log when what is advertised changed in kind.
        var note: String?
        /// When to decide again (the next renewal or epoch boundary); nil: no need.
        var next: ContinuousClock.Instant?
    }

    private(set) var encoder: BeaconEncoder
    private(set) var policy = AdvertisingPolicy.unchecked
    let renewalInterval: Duration
    /// What is on the air now: account, type, flags and epoch of the beacon, and its payload.
    private var advertised: (account: AccountID, type: ActivityType, flags: BeaconFlags, epoch: UInt64, payload: [UInt8])?
    /// When the beacon on the air is due to be renewed.
    private var renewal: ContinuousClock.Instant?
    /// Wakes the daemon for the next decision.
    var timer = OneShotTimer()
    /// Set when handoffd stops: nothing goes on the air again, whatever changes later
    /// (a client's disconnection during shutdown must not register a beacon anew).
    private var retired = false

    init(configuration: BeaconConfiguration, expiry: Duration) {
        encoder = BeaconEncoder(configuration: configuration)
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

    /// Decides for `wanted` at wall-clock time `now` (seconds) and monotonic `instant`.
    mutating func decide(_ wanted: WantedBeacon?, now: Double, instant: ContinuousClock.Instant) -> Decision {
        guard let wanted, !retired else {
            let note = advertised == nil ? nil : "nothing current: not advertising"
            advertised = nil
            renewal = nil
            return Decision(onAir: nil, note: note)
        }
        let epoch = encoder.configuration.epoch(containing: now)
        let next = nextDecision(epochEnd: Double(epoch.endSeconds), now: now, instant: instant)
        if let advertised, advertised.account == wanted.account.id, advertised.type == wanted.type,
            advertised.flags == wanted.flags, advertised.epoch == epoch.index, let renewal, instant < renewal
        {
            return Decision(onAir: onAir(advertised.payload), next: min(next, renewal))
        }
        let payload = encoder.encode(account: wanted.account, activityType: wanted.type, flags: wanted.flags, now: now)
        let note: String? =
            if advertised.map({ $0.account != wanted.account.id || $0.type != wanted.type || $0.flags != wanted.flags })
                ?? true
            {
                "advertising \(wanted.type) for account \(wanted.account.name)"
            } else {
                nil
            }
        advertised = (wanted.account.id, wanted.type, wanted.flags, epoch.index, payload)
        renewal = instant + renewalInterval
        return Decision(
            onAir: onAir(payload), fresh: (payload, wanted.account, wanted.activity), note: note, next: next)
    }

    /// Takes a new policy; returns what the radio should have on the air now.
    mutating func apply(_ policy: AdvertisingPolicy) -> RadioAdvertisement? {
        self.policy = policy
        return retired ? nil : advertised.flatMap { onAir($0.payload) }
    }

    /// Off the air for good (handoffd is stopping).
    mutating func retire() {
        retired = true
        advertised = nil
        timer.cancel()
    }

    private func onAir(_ payload: [UInt8]) -> RadioAdvertisement? {
        policy.advertise ? RadioAdvertisement(payload: payload, type: policy.type) : nil
    }

    /// The epoch boundary (plus 10 ms, to be past it) or the renewal, whichever comes first.
    private func nextDecision(epochEnd: Double, now: Double, instant: ContinuousClock.Instant) -> ContinuousClock.Instant {
        let untilBoundary = Duration.milliseconds(Int64((max(0, epochEnd - now) + 0.01) * 1000))
        return instant + min(untilBoundary, renewalInterval)
    }
}
