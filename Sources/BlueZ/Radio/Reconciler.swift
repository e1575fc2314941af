import Synchronization

/// The loop behind every part that keeps bluetoothd in line with what it
/// wants (`LERadio`, handoffd's GATT server): run a pass, and
/// - fold requests that arrive while a pass runs into one more pass,
/// - retry a failed pass after a delay that doubles up to a maximum,
/// - stop for good when told to.
///
/// Nothing is polled: passes run when asked for, or when a retry falls due.
/// The owner calls `reconcile` from its own actor; the pass and the failure
/// handler run there, so they may use the owner's state freely.
public final class Reconciler: Sendable {
    public struct Backoff: Sendable, Equatable {
        /// The delay before the first retry.
        public var first: Duration
        /// The delay never grows beyond this.
        public var maximum: Duration

        public init(first: Duration = .milliseconds(250), maximum: Duration = .seconds(5)) {
            self.first = first
            self.maximum = maximum
        }
    }

    private struct State {
        var running = false
        var requested = false
        var stopped = false
        var delay: Duration
        var retry: Task<Void, Never>?
        /// Callers of `stopAfterPass` waiting for the running pass to end.
        var waiting: [CheckedContinuation<Void, Never>] = []
    }

    public let backoff: Backoff
    private let state: Mutex<State>

    public init(backoff: Backoff = Backoff()) {
        self.backoff = backoff
        state = Mutex(State(delay: backoff.first))
    }

    /// True while passes run.
    public var isRunning: Bool { state.withLock { $0.running } }
    /// True once `stop` was called.
    public var isStopped: Bool { state.withLock { $0.stopped } }

    /// Runs passes until none is asked for. When passes are already running
    /// (this is a request from inside one, or from a caller that found the
    /// owner suspended in one), asks for one more and returns at once.
    ///
    /// - Parameters:
    ///   - retry: called when a failed pass's delay is over; normally the
    ///     owner's method that calls `reconcile`.
    ///   - pass: brings bluetoothd in line; throws when it could not.
    ///   - failed: told each failure before its retry is scheduled.
    public func reconcile(
        isolation: isolated (any Actor)? = #isolation,
        retry: @escaping @Sendable () async -> Void,
        pass: () async throws -> Void,
        failed: (any Error) -> Void
    ) async {
        let start = state.withLock { state -> Bool in
            guard !state.stopped else { return false }
            if state.running {
                state.requested = true
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        var again = true
        while again {
            state.withLock { $0.requested = false }
            do {
                try await pass()
                resetBackoff()
            } catch {
                failed(error)
                retryLater(retry)
            }
            let (more, waiting) = state.withLock { state in
                let more = state.requested && !state.stopped
                guard !more else { return (true, [CheckedContinuation<Void, Never>]()) }
                state.running = false
                defer { state.waiting = [] }
                return (false, state.waiting)
            }
            again = more
            for caller in waiting { caller.resume() }
        }
    }

    /// The next failure waits the first delay again (a fresh bluetoothd says
    /// nothing of the failures before it).
    public func resetBackoff() {
        state.withLock { $0.delay = backoff.first }
    }

    /// No pass runs after this; a pending retry is cancelled.
    public func stop() {
        let retry = state.withLock { state -> Task<Void, Never>? in
            state.stopped = true
            defer { state.retry = nil }
            return state.retry
        }
        retry?.cancel()
    }

    /// Stops, and returns once the pass under way (if any) has ended: a pass
    /// suspended in a call to bluetoothd (a registration awaiting its reply)
    /// finishes first, so the owner's shutdown sees what that call did.
    /// Without it, an advertisement registered just after the owner
    /// unregistered could outlive the daemon (bluetoothd keeps it).
    public func stopAfterPass() async {
        stop()
        await withCheckedContinuation { (caller: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                guard state.running else { return true }
                state.waiting.append(caller)
                return false
            }
            if now { caller.resume() }
        }
    }

    /// Calls `retry` after the current backoff delay (which then doubles),
    /// unless a retry is already pending or the reconciler is stopped: for
    /// failures found outside a pass.
    public func retryLater(_ retry: @escaping @Sendable () async -> Void) {
        state.withLock { state in
            guard state.retry == nil, !state.stopped else { return }
            let delay = state.delay
            state.delay = min(delay * 2, backoff.maximum)
            state.retry = Task { [self] in
                try? await Task.sleep(for: delay)
                guard !Task.isCancelled else { return }
                self.state.withLock { $0.retry = nil }
                await retry()
            }
        }
    }
}
