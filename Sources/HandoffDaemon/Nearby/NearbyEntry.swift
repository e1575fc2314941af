#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore

/// One activity heard from another device of one of our accounts.
public struct NearbyEntry: Sendable, Equatable {
    /// Stable for as long as we follow the origin device, across rotations.
    public let id: String
    public var account: AccountID
    public var accountName: String
    /// The origin's per-epoch identity, as in its latest beacon.
    public var origin: BeaconOrigin
    /// The origin device's name and key fingerprint, once it is known (docs/devices.md).
    public var deviceName: String?
    public var deviceFingerprint: String?
    public var activityType: ResolvedActivityType
    /// The keyed hash of the type, as the beacon carried it.
    public var typeHash: ActivityTypeHash
    public var flags: BeaconFlags
    /// Exponentially smoothed RSSI in dBm, when the adapter reports one.
    public var rssi: Double?
    public var firstSeen: Date
    public var lastSeen: Date
    /// When it expires, on the monotonic clock.
    public var expires: ContinuousClock.Instant
    /// The bluetoothd Device1 object that carried the latest beacon.
    public var device: String?
    /// The newest beacon accepted from this origin: what a continuation request names.
    public var beacon: RecognizedBeacon
    /// The sender address `beacon` was first heard from: its repeats keep the entry
    /// nearby only from there (a copy from a second address does not).
    public var beaconAddress: String
    /// When `beacon` was first heard, on the monotonic clock: its repeats keep the
    /// entry nearby only while it is fresh (`NearbyRegistry.freshness`).
    public var beaconHeard: ContinuousClock.Instant

    /// The newest sequence number accepted from this origin.
    public var sequence: UInt16 { beacon.sequence }
}
