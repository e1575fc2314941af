import Foundation
import HandoffProtocol

/// Becoming current, resigning, invalidating and saving on request.
extension UserActivity {
    /// Makes this the current activity of the machine, which handoffd advertises to the
    /// user's other devices; publishes it the first time.
    ///
    /// - Throws: `UserActivityError` when a field breaks a limit (nothing is sent);
    ///   `HandoffClientError` when handoffd refuses (`no-account`, …) or cannot be reached.
    ///   After a failure the activity is not current.
    public func becomeCurrent() async throws {
        if isInvalidated { throw UserActivityError.invalidated }
        try validate()
        let order = client.core.nextCurrentOrder()
        let previous = try state.withLock { state throws(UserActivityError) -> Phase in
            guard state.phase != .invalidated else { throw .invalidated }
            let previous = state.phase
            state.phase = .current
            state.currentOrder = order
            return previous
        }
        client.core.track(self)
        do {
            try await perform(.becomeCurrent)
        } catch {
            state.withLock { state in
                if state.phase == .current, state.currentOrder == order { state.phase = previous }
            }
            throw error
        }
    }

    /// Stops advertising the activity, keeping it: `becomeCurrent()` brings it back.
    /// Does nothing unless the activity is current.
    /// - Throws: `HandoffClientError` when handoffd cannot be told (it is resigned here anyway).
    public func resignCurrent() async throws {
        let wasCurrent = state.withLock { state -> Bool in
            guard state.phase == .current else { return false }
            state.phase = .resigned
            return true
        }
        guard wasCurrent else { return }
        try await perform(.resign)
    }

    /// Ends the activity for good. The daemon forgets it; listeners of
    /// `wasContinuedEvents()` see their streams end.
    public func invalidate() async {
        let (sinks, wasPublished) = state.withLock { state in
            let wasPublished = state.phase != .new && state.phase != .invalidated
            state.phase = .invalidated
            let sinks = Array(state.wasContinuedSinks.values)
            state.wasContinuedSinks.removeAll()
            return (sinks, wasPublished)
        }
        for sink in sinks { sink.finish() }
        incomingSink.finish()
        if wasPublished { try? await perform(.invalidate) }
        client.core.untrack(ObjectIdentifier(self), publishedAs: nil)
    }

    /// Saves the fields now, when the activity `needsSave` and is published, instead
    /// of waiting for the automatic save.
    /// - Throws: `UserActivityError` or `HandoffClientError`, as `becomeCurrent()`.
    public func update() async throws {
        let due = state.withLock { $0.needsSave && ($0.phase == .current || $0.phase == .resigned) }
        guard due else { return }
        try await perform(.save)
    }
}
