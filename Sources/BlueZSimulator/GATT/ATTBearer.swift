/// One ATT bearer of a simulated LE link: what is queued on it arrives in
/// order, each item after its own air latency. A link has `attChannels` of
/// them (EATT), so items spread over several bearers can overtake each other,
/// as notifications do on the VM rig. Any thread.
final class ATTBearer: Sendable {
    private struct Delivery: Sendable {
        let at: ContinuousClock.Instant
        let run: @Sendable () async -> Void
    }

    private let continuation: AsyncStream<Delivery>.Continuation
    private let task: Task<Void, Never>

    init() {
        let (stream, continuation) = AsyncStream<Delivery>.makeStream()
        self.continuation = continuation
        task = Task {
            for await delivery in stream {
                try? await Task.sleep(until: delivery.at, clock: .continuous)
                guard !Task.isCancelled else { return }
                await delivery.run()
            }
        }
    }

    deinit { close() }

    /// Runs `run` at `at`, after everything queued before it on this bearer.
    func enqueue(at: ContinuousClock.Instant, _ run: @escaping @Sendable () async -> Void) {
        continuation.yield(Delivery(at: at, run: run))
    }

    /// Drops what is still queued (the link is gone).
    func close() {
        continuation.finish()
        task.cancel()
    }
}
