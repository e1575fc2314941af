import Foundation
import HandoffProtocol

/// The supervisor task that connects, says hello, restores and reconnects with
/// backoff, and the pump task that hands out each connection's events.
extension ClientCore {
    /// The supervisor task's body, started by `startSupervisor`.
    func supervise() async {
        let policy = configuration.reconnect
        var attempt = 0
        while !Task.isCancelled {
            var connection: HandoffConnection?
            do {
                let fresh = try await HandoffConnection.connect(
                    socketPath: configuration.socketPath, requestTimeout: configuration.requestTimeout)
                connection = fresh
                let hello = try await fresh.hello(
                    app: configuration.app, handles: configuration.handles.isEmpty ? nil : configuration.handles,
                    pairingEvents: configuration.pairingEvents ? true : nil)
                let generation = inner.withLock { state -> Int in
                    state.generation += 1
                    state.published.removeAll()
                    state.subscribedGeneration = nil
                    return state.generation
                }
                // Before this connection's events: what the daemon re-sends follows it.
                if generation > 1 && configuration.pairingEvents { deliverPairing(.reconnected) }
                let pump = Task { await self.pump(fresh, generation: generation) }
                try await restore(on: fresh, generation: generation)
                guard becomeReady(fresh, generation: generation, daemon: hello.daemon) else {
                    pump.cancel()
                    await fresh.close()
                    return
                }
                attempt = 0
                await fresh.waitUntilClosed()
                if Task.isCancelled { return }
                connectionLost(fresh)
            } catch {
                if let connection { await connection.close() }
                if Task.isCancelled { return }
                let failure = Self.clientError(error)
                let gaveUp = inner.withLock { state -> ([ReadyWaiter], [AsyncStream<ClientStatus>.Continuation])? in
                    state.lastError = failure
                    guard !state.everConnected else { return nil }
                    // Never connected: fail fast, and let the next use try again.
                    state.phase = .idle
                    state.supervisor = nil
                    return (takeWaiters(&state), state.setStatus(.idle))
                }
                if let (waiters, sinks) = gaveUp {
                    for waiter in waiters {
                        waiter.timer?.cancel()
                        waiter.continuation.resume(throwing: failure)
                    }
                    announce(.idle, to: sinks)
                    finishNearbySinksIfIdle(with: failure)
                    return
                }
                if case .protocolError = failure, connection?.helloResult == nil {
                    // hello itself was refused (unsupported version, invalid handles): retrying cannot help.
                    finish(with: failure)
                    return
                }
            }
            attempt += 1
            if let maximum = policy.maximumAttempts, attempt > maximum {
                finish(with: inner.withLock { $0.lastError } ?? .connectionClosed)
                return
            }
            let sinks = inner.withLock { state in
                state.setStatus(.reconnecting(attempt: attempt, lastError: state.lastError))
            }
            announce(inner.withLock { $0.status }, to: sinks)
            do { try await Task.sleep(for: policy.delay(forAttempt: attempt)) } catch { return }
        }
    }

    static func clientError(_ error: any Error) -> HandoffClientError {
        if let error = error as? HandoffClientError { return error }
        if let error = error as? ProtocolError { return .protocolError(error) }
        return .invalidResponse(String(describing: error))
    }

    /// Marks the client ready on `connection` and resumes the waiters; false when it was closed meanwhile.
    private func becomeReady(_ connection: HandoffConnection, generation: Int, daemon: String) -> Bool {
        let taken = inner.withLock { state -> ([ReadyWaiter], [AsyncStream<ClientStatus>.Continuation])? in
            if case .closed = state.phase { return nil }
            state.phase = .ready(connection, generation: generation)
            state.everConnected = true
            state.lastError = nil
            return (takeWaiters(&state), state.setStatus(.connected(daemon: daemon)))
        }
        guard let (waiters, sinks) = taken else { return false }
        for waiter in waiters {
            waiter.timer?.cancel()
            waiter.continuation.resume(returning: (connection, generation))
        }
        announce(.connected(daemon: daemon), to: sinks)
        return true
    }

    private func connectionLost(_ connection: HandoffConnection) {
        inner.withLock { state in
            if case .ready(let current, _) = state.phase, current === connection { state.phase = .connecting }
        }
    }

    /// After a (re)connection: subscribe again if anyone listens, and publish the live activities again.
    private func restore(on connection: HandoffConnection, generation: Int) async throws {
        if inner.withLock({ !$0.nearbySinks.isEmpty }) {
            try await connection.subscribe()
            inner.withLock { $0.subscribedGeneration = generation }
            let (listed, position) = try await connection.listWithPosition()
            reconcileAll(listed.activities, listedAt: position, generation: generation)
        }
        let live = inner.withLock { state in state.activities.values.compactMap(\.activity) }
            .sorted { $0.currentOrder < $1.currentOrder }
        for activity in live {
            try await activity.restore(on: connection, generation: generation)
        }
    }

    /// Hands the events of one connection out, until it closes.
    private func pump(_ connection: HandoffConnection, generation: Int) async {
        for await event in connection.events {
            switch event.name {
            case .appeared, .updated, .lost:
                guard let activity = try? event.nearbyActivity() else { continue }
                deliverNearby(event.name, activity, generation: generation, sequence: event.sequence)
            case .continued:
                guard let continued = try? event.data(as: ContinuedEvent.self), continued.forwarded == true else {
                    continue  // this client's own continuation: its waiter has it
                }
                deliverContinued(continued.activity)
            case .wasContinued:
                guard let notice = try? event.data(as: WasContinuedEvent.self) else { continue }
                let activity = inner.withLock { state in
                    state.generation == generation ? state.published[notice.id]?.activity : nil
                }
                activity?.receive(notice)
            case .streamOpened:
                guard let opened = try? event.data(as: StreamOpenedEvent.self) else { continue }
                let activity = inner.withLock { state in
                    state.generation == generation ? state.published[opened.id]?.activity : nil
                }
                if let activity { Task { await activity.receive(opened) } }
            case .continueFailed:
                continue  // only ever for this client's own continuations
            // pair.offer / pair.join are not HandoffClient's: these come with `pairingEvents`.
            case .pairNumber:
                if let event = try? event.data(as: PairNumberEvent.self) { deliverPairing(.number(event)) }
            case .pairAnswered:
                if let event = try? event.data(as: PairAnsweredEvent.self) { deliverPairing(.answered(event)) }
            case .paired:
                if let event = try? event.data(as: PairedEvent.self) { deliverPairing(.paired(event)) }
            case .pairFailed:
                if let event = try? event.data(as: PairFailedEvent.self) { deliverPairing(.failed(event)) }
            }
        }
    }
}
