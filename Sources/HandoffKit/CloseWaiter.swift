import Synchronization

/// One task waiting for the connection to close, which cancellation can also release.
///
/// `release()` may come before, during or after `wait()` installs its
/// continuation; the continuation is resumed exactly once either way.
final class CloseWaiter: Sendable {
    private enum Phase {
        case idle
        case waiting(CheckedContinuation<Void, Never>)
        case released
    }

    private let phase = Mutex(Phase.idle)

    /// Suspends until `release()` (returns at once if it already happened).
    func wait() async {
        await withCheckedContinuation { continuation in
            let releasedAlready = phase.withLock { phase -> Bool in
                if case .released = phase { return true }
                phase = .waiting(continuation)
                return false
            }
            if releasedAlready { continuation.resume() }
        }
    }

    /// Lets the waiting task go.
    func release() {
        let continuation = phase.withLock { phase -> CheckedContinuation<Void, Never>? in
            defer { phase = .released }
            if case .waiting(let continuation) = phase { return continuation }
            return nil
        }
        continuation?.resume()
    }
}
