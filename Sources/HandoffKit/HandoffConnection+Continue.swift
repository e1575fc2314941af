import Foundation
import HandoffProtocol

/// Continuing a nearby activity over one connection (docs/protocol.md, `continue`).
extension HandoffConnection {
    /// How much longer than the daemon's own `continue` timeout this client waits for
    /// the outcome before it gives up, cancels and throws `.timedOut(.continue, …)`.
    /// The daemon's `continueFailed` with `timeout` normally comes first.
    public static let continueGraceTime: Duration = .seconds(5)

    /// The daemon's default `continue` timeout, used when none is given.
    public static let defaultContinueTimeout: Duration = .seconds(10)

    /// Continues the nearby activity `nearbyID`: the daemon fetches it from its
    /// device, checks it and hands it over, and the origin app is told.
    ///
    /// - Parameters:
    ///   - nearbyID: the `id` of a `NearbyActivity`, from `list()` or an event.
    ///   - timeout: how long the daemon waits for the origin device (1 to 60 seconds;
    ///     nil: the daemon's default, 10 seconds).
    ///   - willContinue: called once the daemon has accepted the request, before
    ///     anything goes over the air (NSUserActivity's willContinue), with the
    ///     continuation's id and, when a local app declared it, the type.
    /// - Returns: the restored activity, complete and authenticated.
    /// - Throws: `ContinueError` (one case per failure code) when the continuation
    ///   fails; `HandoffClientError` when the request itself fails (`not-found` for
    ///   an unknown id) or the connection closes; `CancellationError` when the calling
    ///   task is cancelled, after `continue.cancel` has been sent.
    public func `continue`(
        nearbyID: String, timeout: Duration? = nil, willContinue: (@Sendable (WillContinue) -> Void)? = nil
    ) async throws -> ContinuedActivity {
        let event = try await continueReturningEvent(nearbyID: nearbyID, timeout: timeout, willContinue: willContinue)
        return try event.data(as: ContinuedEvent.self).activity
    }

    /// `continue(nearbyID:timeout:willContinue:)`, returning the `continued` frame as
    /// it arrived (`handoffctl continue --json` prints its data unchanged).
    /// - Parameter streams: ask for a continuation stream (the `continue` param `streams`): the
    ///   `continued` frame then names the stream's socket, or the continuation fails with
    ///   `ContinueError.streamsUnsupported`.
    public func continueReturningEvent(
        nearbyID: String, timeout: Duration? = nil, streams: Bool = false,
        willContinue: (@Sendable (WillContinue) -> Void)? = nil
    ) async throws -> HandoffEvent {
        if let timeout, !(Duration.seconds(1)...Duration.seconds(60)).contains(timeout) {
            throw HandoffClientError.protocolError(
                ProtocolError(.invalidParams, "timeout: a continue timeout must be between 1 and 60 seconds"))
        }
        let params = ContinueParams(id: nearbyID, timeout: timeout.map(Self.seconds), streams: streams ? true : nil)
        let state = self.state
        let waiter = ContinuationWaiter()
        // The request runs to its answer even when the caller is cancelled meanwhile: a
        // continuation the daemon has started can only be cancelled by its id. The waiter
        // is registered before any later frame is read, so its event cannot slip past.
        let will = try await Task {
            try await self.request(.continue, params, as: WillContinue.self) { line in
                if let will = try? WireFormat.resultValue(WillContinue.self, from: line) {
                    state.register(continuation: will.continuation, waiter)
                }
            }
        }.value
        if Task.isCancelled {
            await abandon(will.continuation)
            throw CancellationError()
        }
        willContinue?(will)

        let limit = (timeout ?? Self.defaultContinueTimeout) + Self.continueGraceTime
        let timer = Task {
            do {
                try await Task.sleep(for: limit)
                waiter.complete(.failure(HandoffClientError.timedOut(.continue, after: limit)))
            } catch {}  // cancelled: the outcome came in time
        }
        defer { timer.cancel() }

        let event: HandoffEvent
        do {
            event = try await waiter.wait()
        } catch let error as HandoffClientError where error == .timedOut(.continue, after: limit) {
            await abandon(will.continuation)
            throw error
        } catch is CancellationError {
            await abandon(will.continuation)
            throw CancellationError()
        }
        switch event.name {
        case .continued:
            return event
        default:
            throw ContinueError(try event.data(as: ContinueFailedEvent.self))
        }
    }

    /// Cancels a continuation by id; waits for the daemon's answer to `continue.cancel`
    /// (which may be `not-found` when it had just finished), never for long.
    public func cancelContinuation(_ continuation: String) async throws {
        _ = try await request(.continueCancel, ContinuationParams(continuation: continuation), as: EmptyResult.self)
    }

    /// Stops waiting for `continuation` and cancels it at the daemon, even from a cancelled task.
    private func abandon(_ continuation: String) async {
        state.forget(continuation: continuation)
        _ = try? await Task { try await self.cancelContinuation(continuation) }.value
    }

    private static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }
}
