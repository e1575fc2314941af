import Synchronization

/// The scanner's events as an asynchronous sequence: what `LERadio.scanEvents`
/// and `AdvertisementScanner.events` return.
///
/// It behaves as `AsyncStream<ScanEvent>` with `.bufferingNewest(bufferSize)`
/// would: one buffer shared by every iterator made from it, the oldest events
/// dropped when a consumer falls that far behind, buffered events still read
/// after the scanner stops, and an iteration cancelled while it waits ends the
/// sequence. It is written for this one element type so that handing over an
/// event that is already buffered takes a lock and no suspension or generic
/// dispatch.
public struct ScanEvents: AsyncSequence, Sendable {
    public typealias Element = ScanEvent

    let channel: ScanEventChannel

    public func makeAsyncIterator() -> Iterator { Iterator(channel: channel) }

    public struct Iterator: AsyncIteratorProtocol {
        let channel: ScanEventChannel

        public mutating func next() async -> ScanEvent? { await channel.next(isolation: nil) }

        /// Runs on the caller's actor: an event already buffered is handed over
        /// without leaving it.
        public mutating func next(isolation actor: isolated (any Actor)?) async -> ScanEvent? {
            await channel.next(isolation: actor)
        }
    }
}

/// The bounded buffer behind `ScanEvents`.
final class ScanEventChannel: Sendable {
    private struct State {
        var events: [ScanEvent] = []
        /// Index of the oldest unread event in `events`.
        var head = 0
        var waiter: CheckedContinuation<ScanEvent?, Never>?
        var finished = false

        var count: Int { events.count - head }

        mutating func pop() -> ScanEvent? {
            guard head < events.count else { return nil }
            let event = events[head]
            head += 1
            if head == events.count {
                events.removeAll(keepingCapacity: true)
                head = 0
            } else if head >= 1024 && head * 2 >= events.count {
                events.removeFirst(head)
                head = 0
            }
            return event
        }
    }

    private let capacity: Int
    private let state = Mutex(State())

    init(capacity: Int) {
        self.capacity = max(1, capacity)
    }

    /// Appends `events` in order; returns how many older events were dropped to make room.
    @discardableResult
    func append(contentsOf events: some Collection<ScanEvent>) -> Int {
        guard !events.isEmpty else { return 0 }
        return deliver { $0.append(contentsOf: events) }
    }

    /// Moves `events` in, in order, leaving it empty; returns how many older
    /// events were dropped to make room. When nothing is waiting to be read the
    /// two buffers are swapped rather than copied, so a producer that batches
    /// hands each batch over without copying it.
    @discardableResult
    func append(moving events: inout [ScanEvent]) -> Int {
        guard !events.isEmpty else { return 0 }
        defer { events.removeAll(keepingCapacity: true) }
        return deliver { buffer in
            if buffer.isEmpty {
                swap(&buffer, &events)
            } else {
                buffer.append(contentsOf: events)
            }
        }
    }

    /// Adds events with `add` (given the buffer, emptied of what was read),
    /// drops the oldest beyond the capacity, and wakes a waiting reader.
    private func deliver(_ add: (inout [ScanEvent]) -> Void) -> Int {
        let (dropped, waiter, first) = state.withLock {
            state -> (Int, CheckedContinuation<ScanEvent?, Never>?, ScanEvent?) in
            guard !state.finished else { return (0, nil, nil) }
            if state.count == 0 {
                state.events.removeAll(keepingCapacity: true)
                state.head = 0
            }
            add(&state.events)
            var dropped = 0
            let excess = state.count - capacity
            if excess > 0 {
                state.head += excess
                dropped = excess
                if state.head * 2 >= state.events.count {
                    state.events.removeFirst(state.head)
                    state.head = 0
                }
            }
            guard let waiter = state.waiter else { return (dropped, nil, nil) }
            state.waiter = nil
            return (dropped, waiter, state.pop())
        }
        waiter?.resume(returning: first)
        return dropped
    }

    /// No more events; the buffered ones can still be read.
    func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<ScanEvent?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
    }

    func next(isolation actor: isolated (any Actor)?) async -> ScanEvent? {
        if let ready = state.withLock({ state -> ScanEvent?? in
            if let event = state.pop() { return .some(event) }
            return state.finished ? .some(nil) : nil
        }) {
            return ready
        }
        return await withTaskCancellationHandler {
            await withCheckedContinuation(isolation: actor) { (continuation: CheckedContinuation<ScanEvent?, Never>) in
                let ready = state.withLock { state -> ScanEvent?? in
                    if let event = state.pop() { return .some(event) }
                    if state.finished || Task.isCancelled {
                        state.finished = true
                        return .some(nil)
                    }
                    precondition(state.waiter == nil, "ScanEvents iterated by two tasks at once")
                    state.waiter = continuation
                    return nil
                }
                if let ready { continuation.resume(returning: ready) }
            }
        } onCancel: {
            finish()
        }
    }
}

extension ScanEvents {
    /// Events fed by hand, for radios other than `LERadio` (a test's fake), with
    /// the same buffering as the scanner's.
    public static func makeStream(bufferSize: Int = 4096) -> (events: ScanEvents, feed: ScanEventFeed) {
        let channel = ScanEventChannel(capacity: bufferSize)
        return (ScanEvents(channel: channel), ScanEventFeed(channel: channel))
    }
}

/// The producing end of `ScanEvents.makeStream`.
public struct ScanEventFeed: Sendable {
    let channel: ScanEventChannel

    /// Appends an event; returns how many older events were dropped to make room.
    @discardableResult
    public func yield(_ event: ScanEvent) -> Int { channel.append(contentsOf: CollectionOfOne(event)) }

    /// No more events; the buffered ones can still be read.
    public func finish() { channel.finish() }
}
