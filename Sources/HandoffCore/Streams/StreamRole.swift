/// Which end of a stream this device is.
public enum StreamRole: Sendable, Hashable, CaseIterable {
    /// The device the activity came from: it made the offer and listens on its PSM.
    case origin
    /// The device that continued the activity: it connects to the PSM.
    case continuing

    /// The direction this end seals.
    public var outgoing: StreamDirection {
        switch self {
        case .origin: .originToContinuing
        case .continuing: .continuingToOrigin
        }
    }

    /// The direction this end opens.
    public var incoming: StreamDirection {
        switch self {
        case .origin: .continuingToOrigin
        case .continuing: .originToContinuing
        }
    }
}
