import HandoffProtocol

/// The `wasContinued` notices handoffd sends when another device continued the activity.
extension UserActivity {
    /// Notices that another device continued this activity, as they arrive
    /// (NSUserActivity's `userActivityWasContinued`). Each call makes a new stream;
    /// each stream gets every notice from its creation on, and ends when the
    /// activity is invalidated.
    public func wasContinuedEvents() -> AsyncStream<WasContinuedEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: WasContinuedEvent.self)
        let token = state.withLock { state -> UInt64? in
            guard state.phase != .invalidated else { return nil }
            state.nextSinkToken += 1
            state.wasContinuedSinks[state.nextSinkToken] = continuation
            return state.nextSinkToken
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.wasContinuedSinks.removeValue(forKey: token) }
        }
        return stream
    }

    /// A `wasContinued` event for this activity.
    func receive(_ notice: WasContinuedEvent) {
        let (sinks, delegate) = state.withLock { (Array($0.wasContinuedSinks.values), $0.delegate.delegate) }
        for sink in sinks { sink.yield(notice) }
        if let delegate {
            Task { delegate.userActivityWasContinued(self, byDevice: notice.byDevice) }
        }
    }
}
