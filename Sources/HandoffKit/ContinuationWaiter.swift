import Synchronization

/// One continuation's wait for its `continued` or `continueFailed` frame.
///
/// `complete(_:)` may come before, during or after `wait()` installs its
/// continuation, from any thread; the first completion wins and the waiting
/// task resumes exactly once. Cancelling the waiting task completes it with
/// `CancellationError`.
final class ContinuationWaiter: Sendable {
    private enum Phase {
        case idle
        case waiting(CheckedContinuation<HandoffEvent, any Error>)
        case done(Result<HandoffEvent, any Error>)
        case consumed
    }

    private let phase = Mutex(Phase.idle)

    /// Suspends until `complete(_:)`, or returns at once when it already happened.
    func wait() async throws -> HandoffEvent {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let early = phase.withLock { phase -> Result<HandoffEvent, any Error>? in
                    switch phase {
                    case .done(let result):
                        phase = .consumed
                        return result
                    case .idle:
                        phase = .waiting(continuation)
                        return nil
                    case .waiting, .consumed:
                        return .failure(CancellationError())  // a second wait(): never done by this type
                    }
                }
                if let early { continuation.resume(with: early) }
            }
        } onCancel: {
            complete(.failure(CancellationError()))
        }
    }

    /// Delivers the outcome; later calls are ignored.
    func complete(_ result: Result<HandoffEvent, any Error>) {
        let waiting = phase.withLock { phase -> CheckedContinuation<HandoffEvent, any Error>? in
            switch phase {
            case .idle:
                phase = .done(result)
                return nil
            case .waiting(let continuation):
                phase = .consumed
                return continuation
            case .done, .consumed:
                return nil
            }
        }
        waiting?.resume(with: result)
    }
}
