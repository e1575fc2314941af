/// The small flags a beacon carries (encrypted: only key holders read them).
///
/// Bits without a name here are kept as received, so a newer sender's flags
/// survive a round trip through an older receiver.
public struct BeaconFlags: OptionSet, Hashable, Sendable, CustomStringConvertible {
    /// The flags byte as carried in the beacon.
    public let rawValue: UInt8

    /// Wraps a flags byte; unnamed bits are kept.
    public init(rawValue: UInt8) {
        self.rawValue = rawValue
    }

    /// The activity has a payload to fetch over GATT.
    public static let hasPayload = BeaconFlags(rawValue: 1 << 0)
    /// The activity has a webpage URL (a browser can continue it).
    public static let hasWebpageURL = BeaconFlags(rawValue: 1 << 1)
    /// The sending app accepts a stream connection.
    public static let supportsStreams = BeaconFlags(rawValue: 1 << 2)
    /// The sender advertises connectably, so it answers exchanges over GATT
    /// (continuations, introductions); without it, a receiver does not try to connect
    /// to introduce itself (docs/devices.md).
    public static let reachable = BeaconFlags(rawValue: 1 << 3)

    /// `[hasPayload, supportsStreams]`, with unnamed bits as `0x..`.
    public var description: String {
        var names: [String] = []
        if contains(.hasPayload) { names.append("hasPayload") }
        if contains(.hasWebpageURL) { names.append("hasWebpageURL") }
        if contains(.supportsStreams) { names.append("supportsStreams") }
        if contains(.reachable) { names.append("reachable") }
        let unnamed = rawValue & ~0b1111
        if unnamed != 0 { names.append("0x" + Hex.encode(unnamed, width: 2)) }
        return "[" + names.joined(separator: ", ") + "]"
    }
}
