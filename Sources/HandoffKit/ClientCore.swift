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
        /// The position of that `list`'s response among the connection's lines: events at or
        /// before it are in the list already.
        var listedThrough: UInt64 = 0
        /// Events of a generation whose `list` has not been applied to this listener yet, in
        /// order; the ones after the list's response are delivered after it.
        var held: [HeldEvent] = []
        var continuation: AsyncThrowingStream<NearbyChange, any Error>.Continuation

        func matches(_ activity: NearbyActivity) -> Bool {
            guard let types else { return true }
            return activity.type.map(types.contains) ?? false
        }
    }

    /// A nearby event waiting for its listener's `list`.
    struct HeldEvent {
        var name: EventName
        var activity: NearbyActivity
        var generation: Int
        var sequence: UInt64
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
        /// `pairingChanges()` streams.
        var pairingSinks: [UInt64: AsyncStream<PairingChange>.Continuation] = [:]
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

    func announce(_ status: ClientStatus, to sinks: [AsyncStream<ClientStatus>.Continuation]) {
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

    func takeWaiters(_ state: inout Inner) -> [ReadyWaiter] {
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

    // MARK: Closing

    /// Closes the client for good: `close()` (error nil) or giving up (the error).
    func finish(with error: HandoffClientError?) {
        typealias Sinks = (
            status: [AsyncStream<ClientStatus>.Continuation], nearby: [NearbySink],
            continued: [AsyncThrowingStream<ContinuedActivity, any Error>.Continuation],
            pairing: [AsyncStream<PairingChange>.Continuation]
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
                Array(state.statusSinks.values), Array(state.nearbySinks.values), Array(state.continuedSinks.values),
                Array(state.pairingSinks.values)
            )
            state.pairingSinks.removeAll()
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
        for sink in sinks.pairing { sink.finish() }
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
}
