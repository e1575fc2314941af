import Synchronization

/// Lets `start` wait until the first snapshot is in, without blocking a thread.
final class SnapshotLoads: Sendable {
    private let state = Mutex<(pending: Int, waiters: [CheckedContinuation<Void, Never>])>((0, []))

    func begin() { state.withLock { $0.pending += 1 } }

    func end() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.pending -= 1
            guard state.pending == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    func wait() async {
        await withCheckedContinuation { continuation in
            let ready = state.withLock { state in
                if state.pending == 0 { return true }
                state.waiters.append(continuation)
                return false
            }
            if ready { continuation.resume() }
        }
    }
}
