import DequeModule
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization

/// The ordered, bounded queue of frames for one connection.
///
/// Responses and events both go through it, so a client sees them in the
/// order the daemon produced them. The reader of the connection's requests
/// waits for room (`waitForRoom`) before it reads the next one: a client that
/// pipelines while reading is slowed down, never dropped. Only events can
/// fill it up; a frame that finds `capacity` frames waiting closes it (the
/// client does not read), and so does `close`.
public final class Outbox: Sendable {
    /// Frames waiting at most; one more closes the outbox.
    public let capacity: Int
    /// Requests are read only while fewer frames than this wait.
    public let readLimit: Int
    private let state = Mutex(State())

    private struct State {
        var frames = Deque<Data>()
        var closed = false
        var overflowed = false
        var consumer: CheckedContinuation<Data?, Never>?
        var roomWaiters: [UInt64: CheckedContinuation<Void, Never>] = [:]
        var nextWaiter: UInt64 = 0
    }

    public init(capacity: Int) {
        self.capacity = max(capacity, 2)
        readLimit = max(self.capacity / 2, 1)
    }

    /// Queues a frame. Returns false when the outbox is closed, or was full and is closed now.
    @discardableResult
    public func send(_ frame: Data) -> Bool {
        let (accepted, consumer, waiters) = state.withLock { state -> (Bool, CheckedContinuation<Data?, Never>?, [CheckedContinuation<Void, Never>]) in
            guard !state.closed else { return (false, nil, []) }
            if let consumer = state.consumer {
                state.consumer = nil
                return (true, consumer, [])
            }
            guard state.frames.count < capacity else {
                state.overflowed = true
                return (false, nil, Self.closeLocked(&state))
            }
            state.frames.append(frame)
            return (true, nil, [])
        }
        consumer?.resume(returning: frame)
        for waiter in waiters { waiter.resume() }
        return accepted
    }

    /// Ends the outbox: the frames already queued are still written, then the connection ends.
    public func close() {
        let (consumer, waiters) = state.withLock { state in
            let waiters = Self.closeLocked(&state)
            // A waiting consumer means nothing is queued: it ends now.
            let consumer = state.consumer
            state.consumer = nil
            return (consumer, waiters)
        }
        consumer?.resume(returning: nil)
        for waiter in waiters { waiter.resume() }
    }

    private static func closeLocked(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
        state.closed = true
        defer { state.roomWaiters = [:] }
        return Array(state.roomWaiters.values)
    }

    public var isClosed: Bool { state.withLock { $0.closed } }
    /// Whether it closed because the client let `capacity` frames pile up.
    public var overflowed: Bool { state.withLock { $0.overflowed } }
    public var count: Int { state.withLock { $0.frames.count } }

    /// Returns once fewer than `readLimit` frames wait, or the outbox is closed.
    public func waitForRoom() async {
        let id = state.withLock { state -> UInt64 in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: CheckedContinuation<Void, Never>) in
                let ready = state.withLock { state -> Bool in
                    if state.closed || state.frames.count < readLimit || Task.isCancelled { return true }
                    state.roomWaiters[id] = waiter
                    return false
                }
                if ready { waiter.resume() }
            }
        } onCancel: {
            state.withLock { $0.roomWaiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// The next frame; nil once the outbox is closed and empty (or the task is cancelled).
    public func next() async -> Data? {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (consumer: CheckedContinuation<Data?, Never>) in
                let (result, waiters) = state.withLock { state -> (Data??, [CheckedContinuation<Void, Never>]) in
                    if let frame = state.frames.popFirst() {
                        guard state.frames.count < readLimit else { return (.some(frame), []) }
                        defer { state.roomWaiters = [:] }
                        return (.some(frame), Array(state.roomWaiters.values))
                    }
                    if state.closed || Task.isCancelled { return (.some(nil), []) }
                    state.consumer = consumer
                    return (nil, [])
                }
                for waiter in waiters { waiter.resume() }
                if let result { consumer.resume(returning: result) }
            }
        } onCancel: {
            let consumer = state.withLock { state in
                defer { state.consumer = nil }
                return state.consumer
            }
            consumer?.resume(returning: nil)
        }
    }

    /// The frames in order, until the outbox is closed and drained.
    public var frames: Frames { Frames(outbox: self) }

    public struct Frames: AsyncSequence, Sendable {
        let outbox: Outbox
        public func makeAsyncIterator() -> Iterator { Iterator(outbox: outbox) }
        public struct Iterator: AsyncIteratorProtocol {
            let outbox: Outbox
            public mutating func next() async -> Data? { await outbox.next() }
        }
    }
}
