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

extension DeviceID {
    /// The high 16 bits of the per-epoch identifier of the device whose card has
    /// `digest`, in `epoch`, for the account of `schedule` (docs/devices.md, section 3):
    /// `HMAC(K_device, ctx ‖ digest)[0..<2]`. The low 16 bits are random, so a
    /// device that restarts within an epoch starts a new beacon identity.
    public static func knownPart(cardDigest digest: [UInt8], schedule: AccountKeySchedule, epoch: Epoch) -> UInt16 {
        let code = schedule.deviceIdentifierKey.authenticationCode(for: epoch.context.bytes + digest)
        return UInt16(code[0]) << 8 | UInt16(code[1])
    }

    /// The identifier's high 16 bits.
    public var knownPart: UInt16 { UInt16(truncatingIfNeeded: rawValue >> 16) }
}
