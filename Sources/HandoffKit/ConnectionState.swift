import Foundation
import HandoffProtocol
import NIOCore
import Synchronization

/// The shared state of one connection: requests waiting for their response,
/// the event stream, and why the connection closed.
///
/// The channel handler feeds it from the event loop; `HandoffConnection`
/// registers requests from any task. Every continuation is resumed exactly
/// once: whoever removes it from `pending` under the lock resumes it.
final class ConnectionState: Sendable {
    /// A request sent and not yet answered.
    struct Pending {
        var method: Method
        var continuation: CheckedContinuation<Data, any Error>
        var timeout: Scheduled<Void>?
        /// Runs with a successful response line before the request's task resumes, on the
        /// event loop, before the next line is read: what it registers is in place for the
        /// frames that follow the response (`continue` registers its continuation this way).
        var onSuccess: (@Sendable (Data) -> Void)?
    }

    struct Inner: ~Copyable {
        var nextID = 1
        var pending: [Int: Pending] = [:]
        /// Set once, when the connection closes; later requests fail with it.
        var closeReason: HandoffClientError?
        /// An error frame without an id that no request was waiting for (or
        /// `too-many-clients`): why the daemon closes, if it then does.
        var unsolicitedError: ProtocolError?
        var hello: HelloResult?
        /// Continuations of this connection waiting for their `continued` or `continueFailed`, by id.
        var continuations: [String: ContinuationWaiter] = [:]
        /// Lines received so far; the one being handled is number `linesReceived`.
        var linesReceived: UInt64 = 0
    }

    private let inner = Mutex(Inner())
    let events: AsyncStream<HandoffEvent>
    private let eventSink: AsyncStream<HandoffEvent>.Continuation

    init() {
        (events, eventSink) = AsyncStream.makeStream(of: HandoffEvent.self, bufferingPolicy: .unbounded)
    }

    /// Takes the next id, records the request under it and queues its frame
    /// with `write`, all under the lock, so frames go out in the order of their ids.
    /// `write` must not call back into this state.
    /// - Returns: the id, or the error to fail the request with (the connection is closed,
    ///   or `write` threw).
    func register(
        method: Method, continuation: CheckedContinuation<Data, any Error>,
        onSuccess: (@Sendable (Data) -> Void)? = nil, write: (Int) throws -> Void
    ) -> Result<Int, HandoffClientError> {
        inner.withLock { state in
            if let reason = state.closeReason { return .failure(reason) }
            let id = state.nextID
            state.nextID += 1
            do {
                try write(id)
            } catch {
                return .failure(
                    .protocolError(
                        ProtocolError(.invalidParams, "cannot encode the \"\(method.rawValue)\" parameters: \(error)")))
            }
            state.pending[id] = Pending(method: method, continuation: continuation, onSuccess: onSuccess)
            return .success(id)
        }
    }

    /// Attaches the timer that fails request `id`; cancels it when the request is already over.
    func attach(_ timeout: Scheduled<Void>, to id: Int) {
        let attached = inner.withLock { state in
            guard state.pending[id] != nil else { return false }
            state.pending[id]?.timeout = timeout
            return true
        }
        if !attached { timeout.cancel() }
    }

    /// Completes request `id`, if it is still waiting.
    func resolve(_ id: Int, with result: Result<Data, any Error>) {
        guard let pending = inner.withLock({ $0.pending.removeValue(forKey: id) }) else { return }
        pending.timeout?.cancel()
        if case .success(let line) = result { pending.onSuccess?(line) }
        pending.continuation.resume(with: result)
    }

    /// Fails request `id` with why the connection closed, or `fallback` while it is open.
    func fail(_ id: Int, orClosedWith fallback: HandoffClientError) {
        let reason = inner.withLock { $0.closeReason } ?? fallback
        resolve(id, with: .failure(reason))
    }

    /// The method of request `id`, while it waits.
    func method(of id: Int) -> Method? {
        inner.withLock { $0.pending[id]?.method }
    }

    var helloResult: HelloResult? {
        get { inner.withLock { $0.hello } }
        set { inner.withLock { $0.hello = newValue } }
    }

    var closeReason: HandoffClientError? {
        inner.withLock { $0.closeReason }
    }

    // MARK: Continuations

    /// Routes the `continued` or `continueFailed` event of `continuation` to `waiter`.
    /// When the connection has closed already, fails the waiter with the reason at once.
    func register(continuation: String, _ waiter: ContinuationWaiter) {
        let closed = inner.withLock { state -> HandoffClientError? in
            if let reason = state.closeReason { return reason }
            state.continuations[continuation] = waiter
            return nil
        }
        if let closed { waiter.complete(.failure(closed)) }
    }

    /// Stops routing the events of `continuation` (after cancelling or giving up on it).
    func forget(continuation: String) {
        _ = inner.withLock { $0.continuations.removeValue(forKey: continuation) }
    }

    /// Hands a `continued` or `continueFailed` frame to the waiter of its continuation, if any.
    private func route(_ event: HandoffEvent) {
        guard let continuation = try? event.data(as: ContinuationOnly.self).continuation,
            let waiter = inner.withLock({ $0.continuations.removeValue(forKey: continuation) })
        else { return }
        waiter.complete(.success(event))
    }

    // MARK: Input from the channel

    /// The number of the line being handled (1 for the first): read in a request's
    /// `onSuccess`, the position of its response among the connection's lines.
    var currentLine: UInt64 {
        inner.withLock { $0.linesReceived }
    }

    /// Handles one line from the daemon.
    func receive(_ line: Data) {
        let sequence = inner.withLock { state in
            state.linesReceived += 1
            return state.linesReceived
        }
        let incoming: WireFormat.Incoming
        do {
            incoming = try WireFormat.incoming(line)
        } catch {
            // An event this version does not know is skipped; a broken response fails its request.
            if let id = try? JSONDecoder().decode(IDOnly.self, from: line).id {
                resolve(id, with: .failure(HandoffClientError.invalidResponse(WireFormat.describe(error))))
            }
            return
        }
        switch incoming {
        case .result(let id?, let line):
            resolve(id, with: .success(line))
        case .error(let id?, let error):
            resolve(id, with: .failure(HandoffClientError.protocolError(error)))
        case .error(nil, let error):
            // The daemon answers in order, so an error it could not give an id
            // (line-too-long, too-many-clients) answers the oldest waiting request.
            let oldest = inner.withLock { state -> Int? in
                guard let oldest = state.pending.keys.min() else {
                    state.unsolicitedError = error
                    return nil
                }
                return oldest
            }
            if let oldest { resolve(oldest, with: .failure(HandoffClientError.protocolError(error))) }
            if error.code == .tooManyClients { inner.withLock { $0.unsolicitedError = error } }
        case .event(let name, let line):
            let event = HandoffEvent(name: name, line: line, sequence: sequence)
            if name == .continued || name == .continueFailed { route(event) }
            eventSink.yield(event)
        case .unknownEvent:
            break  // docs/protocol.md: clients ignore events they do not know.
        case .result(nil, _):
            break
        }
    }

    /// The daemon sent a line longer than this client accepts: its response is lost, so the connection is unusable.
    func receivedOverlongLine(limit: Int) {
        closed(because: .invalidResponse("a line longer than \(limit) bytes"))
    }

    /// The connection is gone: fails every waiting request and ends the event stream.
    func closed(because reason: HandoffClientError) {
        let (failure, waiting, continuations) = inner.withLock { state in
            if state.closeReason == nil {
                state.closeReason = state.unsolicitedError.map { .protocolError($0) } ?? reason
            }
            let waiting = Array(state.pending.values)
            state.pending.removeAll()
            let continuations = Array(state.continuations.values)
            state.continuations.removeAll()
            return (state.closeReason ?? reason, waiting, continuations)
        }
        for pending in waiting {
            pending.timeout?.cancel()
            pending.continuation.resume(throwing: failure)
        }
        for waiter in continuations { waiter.complete(.failure(failure)) }
        eventSink.finish()
    }

    private struct IDOnly: Decodable {
        var id: Int?
    }

    private struct ContinuationOnly: Decodable {
        var continuation: String
    }
}
