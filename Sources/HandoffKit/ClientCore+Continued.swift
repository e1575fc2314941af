import HandoffProtocol

/// `HandoffClient.continuedActivities()`: activities continued here from another
/// device, kept for a listener that has not started yet.
extension ClientCore {
    func continuedActivities(keepingAlive owner: HandoffClient) -> AsyncThrowingStream<ContinuedActivity, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: ContinuedActivity.self)
        let token = inner.withLock { state -> UInt64? in
            if case .closed = state.phase { return nil }
            let token = state.token()
            state.continuedSinks[token] = continuation
            for activity in state.undelivered { continuation.yield(activity) }
            state.undelivered.removeAll()
            return token
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { _ in
            _ = owner.core.inner.withLock { $0.continuedSinks.removeValue(forKey: token) }
        }
        return stream
    }

    func deliverContinued(_ activity: ContinuedActivity) {
        let sinks = inner.withLock { state in
            if state.continuedSinks.isEmpty {
                state.undelivered.append(activity)
                if state.undelivered.count > Self.maximumUndelivered { state.undelivered.removeFirst() }
            }
            return Array(state.continuedSinks.values)
        }
        for sink in sinks { sink.yield(activity) }
    }
}
