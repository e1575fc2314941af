/// A random per-epoch identifier of the device that sent a beacon.
///
/// It is encrypted inside the beacon, so only key holders see it. Each device
/// draws a fresh one for every epoch, so it identifies "the same device"
/// only within one epoch of one account; a nearby-activity registry keys on
/// `BeaconOrigin`, which pairs it with the account and the epoch.
public struct DeviceID: Hashable, Sendable, CustomStringConvertible {
    /// The identifier as a 32-bit number.
    public let rawValue: UInt32

    /// Wraps a raw identifier.
    public init(rawValue: UInt32) {
        self.rawValue = rawValue
    }

    /// Eight lowercase hex digits.
    public var description: String { Hex.encode(rawValue, width: 8) }
}
