import Synchronization

/// A lock for async code: waiting for it suspends the task, never a thread.
///
/// Used to send one activity's changes to the daemon one at a time. Not
/// reentrant; the holder must not wait for anything that needs the lock.
final class AsyncLock: Sendable {
    private struct State {
        var locked = false
        var waiters: [CheckedContinuation<Void, Never>] = []
    }

    private let state = Mutex(State())

    func lock() async {
        await withCheckedContinuation { continuation in
            let acquired = state.withLock { state -> Bool in
                if state.locked {
                    state.waiters.append(continuation)
                    return false
                }
                state.locked = true
                return true
            }
            if acquired { continuation.resume() }
        }
    }

    /// Releases the lock, handing it straight to the longest waiter if there is one.
    func unlock() {
        let next = state.withLock { state -> CheckedContinuation<Void, Never>? in
            if state.waiters.isEmpty {
                state.locked = false
                return nil
            }
            return state.waiters.removeFirst()
        }
        next?.resume()
    }

    /// Runs `body` holding the lock.
    func withLock<R: Sendable>(_ body: () async throws -> R) async rethrows -> R {
        await lock()
        defer { unlock() }
        return try await body()
    }
}
