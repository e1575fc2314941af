/// An activity type hash mapped back through the locally declared types.
public enum ResolvedActivityType: Hashable, Sendable, CustomStringConvertible {
    /// A type some local app declared.
    case known(ActivityType)
    /// No declared type has this hash: the sender's app is not installed here.
    case unknown(ActivityTypeHash)

    /// The type, if known.
    public var type: ActivityType? {
        if case .known(let type) = self { type } else { nil }
    }

    /// The type string, or `unknown type (hash 1a2b3c4d)`.
    public var description: String {
        switch self {
        case .known(let type): type.rawValue
        case .unknown(let hash): "unknown type (hash \(hash))"
        }
    }
}
