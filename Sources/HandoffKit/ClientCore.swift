import Foundation
import HandoffProtocol
import Synchronization

/// The state behind a `HandoffClient`: its connection to handoffd, the task that
/// keeps it up, and everything that must survive a reconnection (subscribers, live
/// activities).
///
/// One supervisor task connects, says hello, restores the subscription and the
/// activities, then marks the client ready and waits for the connection to close;
/// then it reconnects with backoff. A pump task per connection hands the events to
/// subscribers and activities. Nothing here blocks a thread: the state is behind a
/// `Mutex` held only for short, synchronous updates.
final class ClientCore: Sendable {
    let configuration: HandoffClient.Configuration

    enum Phase {
        /// Not connected and not trying.
        case idle
        /// The supervisor is connecting or restoring; requests wait.
        case connecting
        /// Usable: hello done, subscription and activities restored on `generation`.
        case ready(HandoffConnection, generation: Int)
        /// Closed for good.
        case closed(HandoffClientError?)
    }

    struct ReadyWaiter {
        var continuation: CheckedContinuation<(HandoffConnection, Int), any Error>
        var timer: Task<Void, Never>?
    }

    /// One `nearby()` stream: its filter and what it has been told so far.
    struct NearbySink {
        var types: Set<String>?
        var known: [String: NearbyActivity] = [:]
        /// The generation whose `list` this listener was brought in line with.
        var listedGeneration: Int?
        var continuation: AsyncThrowingStream<NearbyChange, any Error>.Continuation

        func matches(_ activity: NearbyActivity) -> Bool {
            guard let types else { return true }
            return activity.type.map(types.contains) ?? false
        }
    }

    struct WeakActivity {
        weak var activity: UserActivity?
    }

    struct Inner {
        var phase = Phase.idle
        var status = ClientStatus.idle
        /// Counts connections that said hello; activity ids are valid on one generation only.
        var generation = 0
        var everConnected = false
        var supervisor: Task<Void, Never>?
        var lastError: HandoffClientError?
        var nextToken: UInt64 = 0
        var readyWaiters: [UInt64: ReadyWaiter] = [:]
        var statusSinks: [UInt64: AsyncStream<ClientStatus>.Continuation] = [:]
        var nearbySinks: [UInt64: NearbySink] = [:]
        /// The generation on which `subscribe` was sent.
        var subscribedGeneration: Int?
        var continuedSinks: [UInt64: AsyncThrowingStream<ContinuedActivity, any Error>.Continuation] = [:]
        /// Forwarded activities that arrived while nobody listened (delivered to the next listener).
        var undelivered: [ContinuedActivity] = []
        /// The activities to restore after a reconnection: published, resigned or current.
        var activities: [ObjectIdentifier: WeakActivity] = [:]
        /// The same, by their daemon id on the current generation (for `wasContinued`).
        var published: [String: WeakActivity] = [:]
        /// Orders `becomeCurrent` calls, so that a restore re-creates the same current activity.
        var currentOrder: UInt64 = 0

        mutating func token() -> UInt64 {
            nextToken += 1
            return nextToken
        }

        /// Sets the status and returns the sinks to tell.
        mutating func setStatus(_ status: ClientStatus) -> [AsyncStream<ClientStatus>.Continuation] {
            guard self.status != status else { return [] }
            self.status = status
            return Array(statusSinks.values)
        }
    }

    /// Forwarded activities kept for a listener that has not started yet.
    static let maximumUndelivered = 16

    let inner = Mutex(Inner())

    init(configuration: HandoffClient.Configuration) {
        self.configuration = configuration
    }

    private func announce(_ status: ClientStatus, to sinks: [AsyncStream<ClientStatus>.Continuation]) {
        for sink in sinks { sink.yield(status) }
    }

    // MARK: Getting a connection

    /// The connection once the client is ready, starting the supervisor if nothing runs.
    ///
    /// Waits while the client connects or reconnects, at most `requestTimeout`. Before
    /// the client has ever connected, a failed attempt fails the waiters at once, so that
    /// an app started without handoffd learns it straight away.
    func ready() async throws -> (HandoffConnection, Int) {
        let token = inner.withLock { $0.token() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                let immediate = inner.withLock { state -> Result<(HandoffConnection, Int), any Error>? in
                    switch state.phase {
                    case .ready(let connection, let generation) where !connection.isClosed:
                        return .success((connection, generation))
                    case .closed(let error):
                        return .failure(error ?? HandoffClientError.connectionClosed)
                    case .idle:
                        startSupervisor(&state)
                    case .ready, .connecting:
                        break
                    }
                    if Task.isCancelled { return .failure(CancellationError()) }
                    state.readyWaiters[token] = ReadyWaiter(continuation: continuation)
                    return nil
                }
                if let immediate {
                    continuation.resume(with: immediate)
                    return
                }
                let timeout = configuration.requestTimeout
                let timer = Task { [weak self] in
                    do { try await Task.sleep(for: timeout) } catch { return }
                    guard let self else { return }
                    let error = inner.withLock { $0.lastError } ?? HandoffClientError.timedOut(.hello, after: timeout)
                    resumeWaiter(token, with: .failure(error))
                }
                let attached = inner.withLock { state -> Bool in
                    guard state.readyWaiters[token] != nil else { return false }
                    state.readyWaiters[token]?.timer = timer
                    return true
                }
                if !attached { timer.cancel() }
            }
        } onCancel: {
            resumeWaiter(token, with: .failure(CancellationError()))
        }
    }

    /// Runs `body` on the ready connection; when that connection turns out to have closed
    /// under it (the daemon went away), runs it again on the next one. For requests that
    /// are safe to repeat.
    func withConnection<R: Sendable>(_ body: (HandoffConnection) async throws -> R) async throws -> R {
        var attempts = 0
        while true {
            let (connection, _) = try await ready()
            do {
                return try await body(connection)
            } catch let error as HandoffClientError where error == .connectionClosed && attempts < 3 && !isClosed {
                attempts += 1
            }
        }
    }

    private func resumeWaiter(_ token: UInt64, with result: Result<(HandoffConnection, Int), any Error>) {
        guard let waiter = inner.withLock({ $0.readyWaiters.removeValue(forKey: token) }) else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(with: result)
    }

    private func takeWaiters(_ state: inout Inner) -> [ReadyWaiter] {
        let waiters = Array(state.readyWaiters.values)
        state.readyWaiters.removeAll()
        return waiters
    }

    private func startSupervisor(_ state: inout Inner) {
        guard state.supervisor == nil else { return }
        state.phase = .connecting
        let sinks = state.setStatus(.connecting)
        state.supervisor = Task { await self.supervise() }
        announce(.connecting, to: sinks)
    }

    /// Starts connecting in the background if nothing runs (for streams that need a connection).
    func start() {
        inner.withLock { state in
            if case .idle = state.phase { startSupervisor(&state) }
        }
    }

    // MARK: The supervisor

    private func supervise() async {
        let policy = configuration.reconnect
        var attempt = 0
        while !Task.isCancelled {
            var connection: HandoffConnection?
            do {
                let fresh = try await HandoffConnection.connect(
                    socketPath: configuration.socketPath, requestTimeout: configuration.requestTimeout)
                connection = fresh
                let hello = try await fresh.hello(
                    app: configuration.app, handles: configuration.handles.isEmpty ? nil : configuration.handles)
                let generation = inner.withLock { state -> Int in
                    state.generation += 1
                    state.published.removeAll()
                    state.subscribedGeneration = nil
                    return state.generation
                }
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
            let listed = try await connection.list().activities
            reconcileAll(listed, generation: generation)
        }
        let live = inner.withLock { state in state.activities.values.compactMap(\.activity) }
            .sorted { $0.currentOrder < $1.currentOrder }
        for activity in live {
            try await activity.restore(on: connection, generation: generation)
        }
    }

    // MARK: Closing

    /// Closes the client for good: `close()` (error nil) or giving up (the error).
    func finish(with error: HandoffClientError?) {
        typealias Sinks = (
            status: [AsyncStream<ClientStatus>.Continuation], nearby: [NearbySink],
            continued: [AsyncThrowingStream<ContinuedActivity, any Error>.Continuation]
        )
        let taken = inner.withLock { state -> (Task<Void, Never>?, HandoffConnection?, [ReadyWaiter], Sinks)? in
            if case .closed = state.phase { return nil }
            var connection: HandoffConnection?
            if case .ready(let current, _) = state.phase { connection = current }
            state.phase = .closed(error)
            state.status = .closed(error)
            let supervisor = state.supervisor
            state.supervisor = nil
            let sinks: Sinks = (
                Array(state.statusSinks.values), Array(state.nearbySinks.values), Array(state.continuedSinks.values)
            )
            state.statusSinks.removeAll()
            state.nearbySinks.removeAll()
            state.continuedSinks.removeAll()
            return (supervisor, connection, takeWaiters(&state), sinks)
        }
        guard let (supervisor, connection, waiters, sinks) = taken else { return }
        supervisor?.cancel()
        if let connection { Task { await connection.close() } }
        for waiter in waiters {
            waiter.timer?.cancel()
            waiter.continuation.resume(throwing: error ?? HandoffClientError.connectionClosed)
        }
        for sink in sinks.status {
            sink.yield(.closed(error))
            sink.finish()
        }
        for sink in sinks.nearby { sink.continuation.finish(throwing: error) }
        for sink in sinks.continued { sink.finish(throwing: error) }
    }

    var isClosed: Bool {
        inner.withLock { state in
            if case .closed = state.phase { return true }
            return false
        }
    }

    // MARK: Status

    func statusUpdates() -> AsyncStream<ClientStatus> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClientStatus.self, bufferingPolicy: .bufferingNewest(32))
        let token = inner.withLock { state -> UInt64? in
            continuation.yield(state.status)
            if case .closed = state.phase { return nil }
            let token = state.token()
            state.statusSinks[token] = continuation
            return token
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.inner.withLock { $0.statusSinks.removeValue(forKey: token) }
        }
        return stream
    }

    // MARK: Events

    /// Hands the events of one connection out, until it closes.
    private func pump(_ connection: HandoffConnection, generation: Int) async {
        for await event in connection.events {
            switch event.name {
            case .appeared, .updated, .lost:
                guard let activity = try? event.nearbyActivity() else { continue }
                deliverNearby(event.name, activity, generation: generation)
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
            case .continueFailed:
                continue  // only ever for this client's own continuations
            }
        }
    }

    // MARK: Forwarded continuations

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

    private func deliverContinued(_ activity: ContinuedActivity) {
        let sinks = inner.withLock { state in
            if state.continuedSinks.isEmpty {
                state.undelivered.append(activity)
                if state.undelivered.count > Self.maximumUndelivered { state.undelivered.removeFirst() }
            }
            return Array(state.continuedSinks.values)
        }
        for sink in sinks { sink.yield(activity) }
    }

    // MARK: Activities

    /// The next `becomeCurrent` order number.
    func nextCurrentOrder() -> UInt64 {
        inner.withLock { state in
            state.currentOrder += 1
            return state.currentOrder
        }
    }

    /// Keeps `activity` for restoring after a reconnection.
    func track(_ activity: UserActivity) {
        inner.withLock { $0.activities[ObjectIdentifier(activity)] = WeakActivity(activity: activity) }
    }

    /// Stops restoring an activity (invalidated, or gone).
    func untrack(_ identifier: ObjectIdentifier, publishedAs id: String?) {
        inner.withLock { state in
            state.activities[identifier] = nil
            if let id { state.published[id] = nil }
        }
    }

    /// Records the daemon's id for `activity` on `generation` (for `wasContinued`).
    func published(_ activity: UserActivity, as id: String, generation: Int, replacing old: String?) {
        inner.withLock { state in
            guard state.generation == generation else { return }
            if let old { state.published[old] = nil }
            state.published[id] = WeakActivity(activity: activity)
        }
    }

    /// Invalidates an activity whose object went away, if its connection is still the current one.
    func invalidateLeftover(_ id: String, generation: Int) async {
        let connection = inner.withLock { state -> HandoffConnection? in
            if case .ready(let connection, let current) = state.phase, current == generation { return connection }
            return nil
        }
        try? await connection?.invalidate(id: id)
    }
}
