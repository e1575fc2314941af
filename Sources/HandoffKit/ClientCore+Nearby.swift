import Foundation
import HandoffProtocol
import Synchronization

/// `HandoffClient.nearby()`: the listeners, each with its own view of what is
/// nearby, kept in line with handoffd's `list` after every (re)connection and
/// with its `appeared`/`updated`/`lost` events in between.
extension ClientCore {
    func nearby(types: [String]?, keepingAlive owner: HandoffClient) -> AsyncThrowingStream<NearbyChange, any Error> {
        let (stream, continuation) = AsyncThrowingStream.makeStream(of: NearbyChange.self)
        let sink = NearbySink(types: types.map(Set.init), continuation: continuation)
        let token = inner.withLock { state -> UInt64? in
            if case .closed = state.phase { return nil }
            let token = state.token()
            state.nearbySinks[token] = sink
            return token
        }
        guard let token else {
            continuation.finish(throwing: inner.withLock { state -> HandoffClientError? in
                if case .closed(let error) = state.phase { return error }
                return nil
            })
            return stream
        }
        let attach = Task { await self.attachNearby(token) }
        continuation.onTermination = { _ in
            attach.cancel()
            // The subscription stays: unsubscribing could race with the next listener's subscribe.
            _ = owner.core.inner.withLock { $0.nearbySinks.removeValue(forKey: token) }
        }
        return stream
    }

    /// Subscribes (once per connection) and tells the new listener what is nearby now.
    func attachNearby(_ token: UInt64) async {
        do {
            let (connection, generation) = try await ready()
            if inner.withLock({ $0.subscribedGeneration != generation }) {
                try await connection.subscribe()
                inner.withLock { state in
                    if state.generation == generation { state.subscribedGeneration = generation }
                }
            }
            // The restore of this connection may have listed for this listener already.
            if inner.withLock({ $0.nearbySinks[token]?.listedGeneration == generation }) { return }
            let (listed, position) = try await connection.listWithPosition()
            inner.withLock { state in
                guard state.generation == generation, var sink = state.nearbySinks[token],
                    sink.listedGeneration != generation
                else { return }
                // Yielded under the lock: the pump's next event for this listener comes after.
                for change in Self.reconcile(&sink, with: listed.activities, listedAt: position, of: generation, dropMissing: false) {
                    sink.continuation.yield(change)
                }
                state.nearbySinks[token] = sink
            }
        } catch is CancellationError {
            return
        } catch let error as HandoffClientError where error == .connectionClosed && !isClosed {
            return  // the next connection's restore subscribes and lists for every listener
        } catch {
            let sink = inner.withLock { $0.nearbySinks.removeValue(forKey: token) }
            sink?.continuation.finish(throwing: error)
        }
    }

    /// A first connection failed: listeners waiting for it learn why.
    func finishNearbySinksIfIdle(with error: HandoffClientError) {
        let sinks = inner.withLock { state -> [NearbySink] in
            guard case .idle = state.phase else { return [] }
            let sinks = Array(state.nearbySinks.values)
            state.nearbySinks.removeAll()
            return sinks
        }
        for sink in sinks { sink.continuation.finish(throwing: error) }
    }

    /// Brings every listener in line with a fresh `list` after a reconnection.
    func reconcileAll(_ listed: [NearbyActivity], listedAt position: UInt64, generation: Int) {
        inner.withLock { state in
            guard state.generation == generation else { return }
            for token in state.nearbySinks.keys {
                guard var sink = state.nearbySinks[token] else { continue }
                // Yielded under the lock: the pump's next event for this listener comes after.
                for change in Self.reconcile(&sink, with: listed, listedAt: position, of: generation, dropMissing: true) {
                    sink.continuation.yield(change)
                }
                state.nearbySinks[token] = sink
            }
        }
    }

    /// The changes that take `sink` from what it knows to `listed` (the `list` response at
    /// `position`), followed by the events held for it that came after that response. With
    /// `dropMissing`, what it knows and `listed` lacks is lost (a restarted daemon forgot it).
    static func reconcile(
        _ sink: inout NearbySink, with listed: [NearbyActivity], listedAt position: UInt64, of generation: Int,
        dropMissing: Bool
    ) -> [NearbyChange] {
        var changes: [NearbyChange] = []
        sink.listedGeneration = generation
        sink.listedThrough = position
        let visible = listed.filter(sink.matches)
        if dropMissing {
            let ids = Set(visible.map(\.id))
            for (id, old) in sink.known where !ids.contains(id) {
                changes.append(.lost(old))
                sink.known[id] = nil
            }
        }
        for activity in visible {
            if let old = sink.known[activity.id] {
                if old != activity { changes.append(.updated(activity)) }
            } else {
                changes.append(.appeared(activity))
            }
            sink.known[activity.id] = activity
        }
        let held = sink.held
        sink.held = []
        for event in held where event.generation == generation && event.sequence > position {
            if let change = apply(event.name, event.activity, to: &sink) { changes.append(change) }
        }
        return changes
    }

    /// What an `appeared`, `updated` or `lost` event means to a listener that has its list.
    static func apply(_ name: EventName, _ activity: NearbyActivity, to sink: inout NearbySink) -> NearbyChange? {
        let known = sink.known[activity.id] != nil
        if name == .lost {
            guard known else { return nil }
            sink.known[activity.id] = nil
            return .lost(activity)
        } else if sink.matches(activity) {
            sink.known[activity.id] = activity
            return known ? .updated(activity) : .appeared(activity)
        } else if known {
            // It no longer matches the filter (its type changed): gone, for this listener.
            sink.known[activity.id] = nil
            return .lost(activity)
        }
        return nil
    }

    /// An event of connection `generation`, numbered `sequence` among its lines. A listener
    /// still waiting for that connection's `list` holds it; one whose list came after it skips
    /// it (the list had it already).
    func deliverNearby(_ name: EventName, _ activity: NearbyActivity, generation: Int, sequence: UInt64) {
        inner.withLock { state in
            guard state.generation == generation else { return }
            for token in state.nearbySinks.keys {
                guard var sink = state.nearbySinks[token] else { continue }
                if sink.listedGeneration != generation {
                    sink.held.append(HeldEvent(name: name, activity: activity, generation: generation, sequence: sequence))
                } else if sequence > sink.listedThrough, let change = Self.apply(name, activity, to: &sink) {
                    sink.continuation.yield(change)
                }
                state.nearbySinks[token] = sink
            }
        }
    }
}
