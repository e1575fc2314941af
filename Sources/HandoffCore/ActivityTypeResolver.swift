/// Maps the activity type hashes of one account back to type strings,
/// through the set of types that local apps declared.
public struct ActivityTypeResolver: Sendable {
    /// The account whose type-hash key is used.
    public let account: AccountID
    private let types: [ActivityTypeHash: ActivityType]
    /// Hashes that two or more declared types share (astronomically rare with
    /// 32-bit hashes); such a hash resolves to the alphabetically first type.
    public let ambiguousHashes: Set<ActivityTypeHash>

    /// Hashes every declared type under `account`.
    public init(account: AccountKey, declaredTypes: some Sequence<ActivityType>) {
        var types: [ActivityTypeHash: ActivityType] = [:]
        var ambiguous: Set<ActivityTypeHash> = []
        for type in Set(declaredTypes).sorted() {
            let hash = type.hash(for: account)
            if types[hash] == nil { types[hash] = type } else { ambiguous.insert(hash) }
        }
        self.account = account.id
        self.types = types
        ambiguousHashes = ambiguous
    }

    /// The declared type with this hash, or `.unknown(hash)`.
    public func resolve(_ hash: ActivityTypeHash) -> ResolvedActivityType {
        if let type = types[hash] { .known(type) } else { .unknown(hash) }
    }

    /// Number of distinct declared types.
    public var count: Int { types.count }
}
