/// handoffd's continuation streams (docs/continuation.md, section 10): the bound on open streams, and each
/// stream's owner and handle, so that a closed connection or a stopping daemon ends its streams.
struct DaemonStreams: Sendable {
    /// One offer or relay, on either side.
    struct Stream: Sendable {
        let uid: UInt32
        /// The connection the stream is for: on the origin, the one that published the activity; on the
        /// continuing side, the one that sent `continue`.
        let client: UInt64
        let handle: StreamHandle
    }

    var budget: StreamBudget
    private(set) var open: [UInt64: Stream] = [:]
    private var next: UInt64 = 0

    init(perUser: Int, total: Int) {
        budget = StreamBudget(perUser: perUser, total: total)
    }

    /// Takes a slot of the budget for `uid` and records the stream.
    /// - Throws: `StreamBudgetError` naming the bound reached; nothing is taken then.
    mutating func add(uid: UInt32, client: UInt64) throws(StreamBudgetError) -> (id: UInt64, handle: StreamHandle) {
        try budget.take(for: uid)
        next += 1
        let handle = StreamHandle()
        open[next] = Stream(uid: uid, client: client, handle: handle)
        return (next, handle)
    }

    /// Forgets an ended stream and gives its slot back; extra calls change nothing.
    mutating func remove(_ id: UInt64) {
        guard let stream = open.removeValue(forKey: id) else { return }
        budget.give(for: stream.uid)
    }

    /// Cancels the streams of a closed connection (their relays end, then `remove` them).
    func cancelAll(of client: UInt64) {
        for stream in open.values where stream.client == client { stream.handle.cancel() }
    }

    func cancelAll() {
        for stream in open.values { stream.handle.cancel() }
    }
}
