/// Runs D-Bus side effects (exporting objects, storing property values,
/// emitting signals) one after another, in the order they were queued.
///
/// The daemon's state lives in an actor, and the DBus module's setters are
/// `async`; awaiting them from the actor would let a later change overtake an
/// earlier one. Queueing is synchronous, so the bus sees changes in exactly
/// the order the actor made them.
final class BusWriter: Sendable {
    typealias Operation = @Sendable () async -> Void

    private enum Item: Sendable {
        case run(Operation)
        case barrier(CheckedContinuation<Void, Never>)
    }

    private let continuation: AsyncStream<Item>.Continuation
    private let worker: Task<Void, Never>

    init() {
        let (stream, continuation) = AsyncStream<Item>.makeStream()
        self.continuation = continuation
        worker = Task {
            for await item in stream {
                switch item {
                case .run(let operation): await operation()
                case .barrier(let waiter): waiter.resume()
                }
            }
        }
    }

    deinit {
        continuation.finish()
    }

    /// Queues `operation` after everything queued before it.
    func enqueue(_ operation: @escaping Operation) {
        continuation.yield(.run(operation))
    }

    /// Waits until everything queued so far has run.
    func flush() async {
        await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
            if case .terminated = continuation.yield(.barrier(waiter)) { waiter.resume() }
        }
    }

    /// Runs what is queued, then stops taking work.
    func finish() async {
        continuation.finish()
        await worker.value
    }
}
