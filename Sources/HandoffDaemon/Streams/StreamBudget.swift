/// The bound on continuation streams open at once (docs/continuation.md, section 10.6, "Limits"): at most
/// `perUser` for one user's apps and `total` on this laptop, counting offers waiting for a channel and
/// relays running, on either side.
struct StreamBudget: Sendable {
    let perUser: Int
    let total: Int
    private(set) var open: [UInt32: Int] = [:]

    init(perUser: Int, total: Int) {
        self.perUser = perUser
        self.total = total
    }

    /// All users' open streams.
    var count: Int { open.values.reduce(0, +) }

    /// Takes one stream for `uid`.
    /// - Throws: `StreamBudgetError` naming the bound that is reached; nothing is taken then.
    mutating func take(for uid: UInt32) throws(StreamBudgetError) {
        guard count < total else { throw .laptopLimit(total) }
        guard open[uid, default: 0] < perUser else { throw .userLimit(perUser) }
        open[uid, default: 0] += 1
    }

    /// Gives back one stream of `uid` (a relay or an offer ended); extra calls change nothing.
    mutating func give(for uid: UInt32) {
        guard let held = open[uid] else { return }
        open[uid] = held > 1 ? held - 1 : nil
    }
}

/// Why `StreamBudget` refused a stream.
enum StreamBudgetError: Error, Sendable, Equatable, CustomStringConvertible {
    /// This user's apps already have `[streams] max_per_user` streams open.
    case userLimit(Int)
    /// This laptop already has `[streams] max_total` streams open.
    case laptopLimit(Int)

    var description: String {
        switch self {
        case .userLimit(let limit): "this user already has \(limit) continuation streams open ([streams] max_per_user)"
        case .laptopLimit(let limit): "this laptop already has \(limit) continuation streams open ([streams] max_total)"
        }
    }
}
