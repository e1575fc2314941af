/// The status byte of a response: `ok`, or why the origin refused (docs/continuation.md, section 5).
public enum ExchangeStatus: UInt8, Sendable, Hashable, CaseIterable, Error, CustomStringConvertible {
    case ok = 0
    /// Wrong version or length.
    case malformed = 1
    /// The tag, device or sequence is not of a beacon the origin advertised in the window.
    case unknownBeacon = 2
    /// The request did not open under the account's payload key.
    case authenticationFailed = 3
    /// The request nonce was already used.
    case replayed = 4
    /// The advertised activity is no longer current, or has expired.
    case notCurrent = 5
    /// The origin is serving as many exchanges as it may; try again.
    case busy = 6
    /// A rekey's sender is not a device of the origin's roster (docs/continuation.md, section 11).
    case unknownDevice = 7
    /// A rekey's envelope did not open, or its contents were refused (section 11).
    case invalidEnvelope = 8

    public var description: String {
        switch self {
        case .ok: "ok"
        case .malformed: "the request was malformed"
        case .unknownBeacon: "the request names no beacon the origin advertised recently"
        case .authenticationFailed: "the request failed authentication"
        case .replayed: "the request was a replay"
        case .notCurrent: "the activity is no longer current on the origin device"
        case .busy: "the origin device is busy"
        case .unknownDevice: "the origin device does not know the requesting device"
        case .invalidEnvelope: "the origin device refused the rekey envelope"
        }
    }
}
