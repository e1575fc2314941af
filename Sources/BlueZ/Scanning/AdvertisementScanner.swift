import DBus
import Synchronization

/// Turns bluetoothd's Device1 objects into a stream of advertisement reports
/// for one company ID on one adapter.
///
/// bluetoothd files each advertisement's Manufacturer Specific Data in
/// `Device1.ManufacturerData` (a cache keyed by company ID) and emits
/// `PropertiesChanged`; with `DuplicateData` on it does so for every
/// advertisement received, even when the bytes did not change. Each such
/// change with our company ID becomes a `.report`, as does an RSSI change.
///
/// The work happens synchronously in the object manager's advertisement
/// observer (`observeAdvertisements`, typed, no property dictionaries), on the
/// D-Bus connection's thread; only the finished events cross to the consumer.
/// The event buffer is bounded (oldest dropped), so a flood cannot grow memory.
///
/// With a `coalescing` interval, events are handed over in batches: the first
/// event of a batch starts the interval, and when it ends every event gathered
/// meanwhile goes to `events` at once, in order. The consumer then wakes once
/// per batch instead of once per advertisement, which is most of what a report
/// costs at a few thousand a second; each event is late by at most the interval.
public final class AdvertisementScanner: Sendable {
    /// Scan events, in the order bluetoothd sent the changes.
    public let events: ScanEvents

    private struct State {
        var adapter: DBusObjectPath?
        var reports: UInt64 = 0
        var dropped: UInt64 = 0
        /// Events waiting for the end of the coalescing interval.
        var pending: [ScanEvent] = []
        var flushScheduled = false
    }
    private let companyID: UInt16
    /// The object manager's connection: its thread runs the coalescing timer.
    private let connection: DBusConnection
    private let coalescing: Duration
    /// `coalescing > .zero`, asked per report.
    private let coalesces: Bool
    private let bufferSize: Int
    private let state: Mutex<State>
    private let channel: ScanEventChannel
    private let tokens: Mutex<[ObserverToken]> = Mutex([])

    /// Starts turning `manager`'s changes into events.
    /// - Parameters:
    ///   - adapter: the adapter whose devices count; nil reports nothing until `setAdapter`.
    ///   - bufferSize: events kept for a slow consumer before the oldest are dropped.
    ///   - coalescing: how long events may wait to be handed over together; zero
    ///     hands each one over at once.
    public init(
        manager: BlueZObjectManager, adapter: DBusObjectPath?, companyID: UInt16, bufferSize: Int = 4096,
        coalescing: Duration = .zero
    ) {
        self.companyID = companyID
        self.connection = manager.connection
        self.coalescing = coalescing
        coalesces = coalescing > .zero
        self.bufferSize = max(1, bufferSize)
        self.state = Mutex(State(adapter: adapter))
        channel = ScanEventChannel(capacity: self.bufferSize)
        events = ScanEvents(channel: channel)
        let tokens = [
            manager.observeAdvertisements { [weak self] advertisement in self?.report(advertisement) }
        ]
        self.tokens.withLock { $0 = tokens }
    }

    deinit {
        tokens.withLock { $0.forEach { $0.cancel() } }
        channel.finish()
    }

    /// Stops reporting and finishes `events` (after the events still gathered).
    public func stop() {
        tokens.withLock { $0.forEach { $0.cancel() } }
        flush()
        channel.finish()
    }

    /// Switches to another adapter (or none).
    public func setAdapter(_ adapter: DBusObjectPath?) {
        state.withLock { $0.adapter = adapter }
    }

    /// Counts since the scanner started: reports emitted, and events dropped
    /// because the consumer fell more than `bufferSize` behind.
    public var counters: (reports: UInt64, dropped: UInt64) {
        state.withLock { ($0.reports, $0.dropped) }
    }

    /// Queues an event; true when it starts a coalescing interval, whose end
    /// the caller must schedule (`scheduleFlush`, outside the lock).
    private func enqueue(_ event: ScanEvent, _ state: inout State) -> Bool {
        guard coalesces else {
            state.dropped += UInt64(channel.append(contentsOf: CollectionOfOne(event)))
            return false
        }
        state.pending.append(event)
        // A batch as large as the buffer goes at once rather than growing.
        if state.pending.count >= bufferSize { hand(&state) }
        guard !state.flushScheduled else { return false }
        state.flushScheduled = true
        return true
    }

    private func scheduleFlush() {
        // On the connection's thread, which is awake at this rate anyway: no task
        // and no timer thread per batch.
        let scheduled = connection.schedule(after: coalescing) { [weak self] in self?.flush() }
        guard !scheduled else { return }
        let interval = coalescing
        Task { [weak self] in
            try? await Task.sleep(for: interval)
            self?.flush()
        }
    }

    /// Hands the gathered events to `events`.
    private func flush() {
        state.withLock { state in
            state.flushScheduled = false
            hand(&state)
        }
    }

    /// Yields the gathered events. Under the state lock, so that batches stay in
    /// order; the channel only resumes the consumer, it never calls back into us.
    private func hand(_ state: inout State) {
        state.dropped += UInt64(channel.append(moving: &state.pending))
    }

    /// A device appeared or was heard again: a report when it carries our
    /// company ID and belongs to our adapter. One lock for the check, the
    /// bookkeeping and the queueing: this runs per advertisement.
    private func report(_ advertisement: DeviceAdvertisement) {
        guard let data = advertisement.manufacturerData[companyID] else { return }
        let receivedAt = ContinuousClock.now
        let startInterval = state.withLock { state -> Bool in
            guard state.adapter == advertisement.adapter else { return false }
            state.reports += 1
            let report = AdvertisementReport(
                identity: advertisement.identity, rssi: advertisement.rssi, companyID: companyID, data: data,
                receivedAt: receivedAt)
            return enqueue(.report(report), &state)
        }
        if startInterval { scheduleFlush() }
    }
}
