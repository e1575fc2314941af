/// Which way the frames of one half of a stream go. Each direction has its own key and its own counter.
public enum StreamDirection: Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// From the device that continued the activity to the device it came from.
    case continuingToOrigin
    /// From the origin device to the continuing one.
    case originToContinuing

    /// The HKDF `info` label of this direction's key.
    var label: [UInt8] {
        switch self {
        case .continuingToOrigin: StreamFormat.continuingToOriginLabel
        case .originToContinuing: StreamFormat.originToContinuingLabel
        }
    }

    public var description: String {
        switch self {
        case .continuingToOrigin: "continuing to origin"
        case .originToContinuing: "origin to continuing"
        }
    }
}
