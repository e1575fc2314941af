import Synchronization

/// Identifies a call so that task cancellation can find it.
final class CallToken: Sendable {
    let id: UInt64
    private let cancelled = Atomic<Bool>(false)
    init(id: UInt64) { self.id = id }
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }
    func cancel() { cancelled.store(true, ordering: .releasing) }
}
