/// Why a received payload was not accepted as a beacon of a known account.
///
/// The cases are ordered as the recogniser checks them: the first four need
/// no cryptography at all.
public enum BeaconRejection: Error, Sendable, Hashable, CustomStringConvertible {
    /// Fewer bytes than a version 1 beacon has (24); empty payloads land here.
    case tooShort(length: Int)
    /// More bytes than a version 1 beacon has (24).
    case tooLong(length: Int)
    /// The header's version nibble is not one this code understands.
    case unsupportedVersion(UInt8)
    /// No known account has this recognition tag for any nearby epoch: a
    /// stranger's beacon, random data, or one from far outside the window.
    case unknownTag
    /// The tag matched a known account but the MAC is wrong: forged or corrupted.
    case authenticationFailed
    /// Authentic, but made for an epoch before the accepted window.
    case epochTooOld(beacon: Epoch, current: Epoch)
    /// Authentic, but made for an epoch after the accepted window.
    case epochTooNew(beacon: Epoch, current: Epoch)
    /// Authentic, but this sequence number from this origin was already
    /// accepted (or is too far behind the newest one). Repeats of an unchanged
    /// advertisement land here too: the daemon may take them as "still nearby".
    case replayed(origin: BeaconOrigin, sequence: UInt16)

    /// A one-line explanation for logs.
    public var description: String {
        switch self {
        case .tooShort(let length):
            "beacon too short: \(length) bytes, expected \(BeaconFormat.payloadLength)"
        case .tooLong(let length):
            "beacon too long: \(length) bytes, expected \(BeaconFormat.payloadLength)"
        case .unsupportedVersion(let version):
            "unsupported beacon format version \(version) (this build reads version \(BeaconFormat.version))"
        case .unknownTag:
            "recognition tag matches no known account in the current epoch window"
        case .authenticationFailed:
            "beacon authentication failed: the MAC does not match (forged or corrupted)"
        case .epochTooOld(let beacon, let current):
            "beacon is from \(beacon), too old for the current \(current) (clock skew beyond one epoch?)"
        case .epochTooNew(let beacon, let current):
            "beacon is from \(beacon), too new for the current \(current) (clock skew beyond one epoch?)"
        case .replayed(let origin, let sequence):
            "replayed beacon: sequence \(sequence) from \(origin) was already seen"
        }
    }
}
