import DBus
import Logging
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
/// Every report lost here is counted (`counters.dropped`) and, with a logger,
/// said: a warning at the first drop, then at most one line per
/// `dropLogInterval` with the count since the line before, so a daemon that
/// keeps falling behind logs once a minute rather than once per report. A
/// report is lost when the consumer falls more than `bufferSize` events
/// behind (the oldest go), and when an advertisement with our company ID
/// names a device of our adapter that the object manager does not hold yet
/// (`observeUnannouncedAdvertisements`: bluetoothd had not announced it, or the
/// tree's snapshot was still on its way), which cannot become a report.
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
        /// Every report lost, and those of them lost because their device was
        /// not announced (the rest: the consumer fell behind).
        var dropped: UInt64 = 0
        var unannounced: UInt64 = 0
        /// Events waiting for the end of the coalescing interval.
        var pending: [ScanEvent] = []
        var flushScheduled = false
        /// Dropped since the last log line, when that line was written, and
        /// whether the next one is scheduled.
        var droppedSinceLine: UInt64 = 0
        var unannouncedSinceLine: UInt64 = 0
        var lastDropLine: ContinuousClock.Instant?
        var dropLineScheduled = false
    }

    /// What to do about drops once the state lock is released.
    private enum DropNote {
        var isNothing: Bool { if case .nothing = self { true } else { false } }

        case nothing
        /// Log that `count` events were dropped since the last line (`unannounced`
        /// of them from devices not announced), `total` in all.
        case log(count: UInt64, unannounced: UInt64, total: UInt64)
        /// Come back after the interval to log what was dropped meanwhile.
        case schedule(Duration)
    }

    /// What a locked section leaves to do after the lock: start a coalescing
    /// interval, and whatever drops ask for.
    private struct AfterLock {
        var startInterval = false
        var drops = DropNote.nothing
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
    private let logger: Logger?
    private let dropLogInterval: Duration

    /// Starts turning `manager`'s changes into events.
    /// - Parameters:
    ///   - adapter: the adapter whose devices count; nil reports nothing until `setAdapter`.
    ///   - bufferSize: events kept for a slow consumer before the oldest are dropped.
    ///   - coalescing: how long events may wait to be handed over together; zero
    ///     hands each one over at once.
    ///   - logger: where drops are said (rate-limited); nil counts them only.
    ///   - dropLogInterval: at most one drop line per this interval.
    public init(
        manager: BlueZObjectManager, adapter: DBusObjectPath?, companyID: UInt16, bufferSize: Int = 4096,
        coalescing: Duration = .zero, logger: Logger? = nil, dropLogInterval: Duration = .seconds(60)
    ) {
        self.companyID = companyID
        self.logger = logger
        self.dropLogInterval = dropLogInterval
        self.connection = manager.connection
        self.coalescing = coalescing
        coalesces = coalescing > .zero
        self.bufferSize = max(1, bufferSize)
        self.state = Mutex(State(adapter: adapter))
        channel = ScanEventChannel(capacity: self.bufferSize)
        events = ScanEvents(channel: channel)
        let tokens = [
            manager.observeAdvertisements { [weak self] advertisement in self?.report(advertisement) },
            manager.observeUnannouncedAdvertisements { [weak self] path, data in self?.unannounced(path, data) },
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

    /// Counts since the scanner started: reports emitted, and reports lost
    /// (`dropped`: the consumer fell more than `bufferSize` behind, or the
    /// device was not announced), of which `unannounced` for the latter.
    public var counters: (reports: UInt64, dropped: UInt64, unannounced: UInt64) {
        state.withLock { ($0.reports, $0.dropped, $0.unannounced) }
    }

    /// Queues an event; says what the caller must do outside the lock (`finish`):
    /// schedule the end of a coalescing interval it starts, say drops.
    private func enqueue(_ event: ScanEvent, _ state: inout State) -> AfterLock {
        guard coalesces else {
            return AfterLock(drops: noteDrops(channel.append(contentsOf: CollectionOfOne(event)), &state))
        }
        state.pending.append(event)
        var after = AfterLock()
        // A batch as large as the buffer goes at once rather than growing.
        if state.pending.count >= bufferSize { after.drops = hand(&state) }
        guard !state.flushScheduled else { return after }
        state.flushScheduled = true
        after.startInterval = true
        return after
    }

    /// Counts `count` dropped events (`unannounced`: from devices not announced);
    /// says whether a line is due now or later.
    private func noteDrops(_ count: Int, _ state: inout State, unannounced: Bool = false) -> DropNote {
        guard count > 0 else { return .nothing }
        state.dropped += UInt64(count)
        state.droppedSinceLine += UInt64(count)
        if unannounced {
            state.unannounced += UInt64(count)
            state.unannouncedSinceLine += UInt64(count)
        }
        guard logger != nil else { return .nothing }
        let now = ContinuousClock.now
        if let last = state.lastDropLine, now - last < dropLogInterval {
            guard !state.dropLineScheduled else { return .nothing }
            state.dropLineScheduled = true
            return .schedule(last + dropLogInterval - now)
        }
        return takeDropLine(&state, now: now)
    }

    private func takeDropLine(_ state: inout State, now: ContinuousClock.Instant) -> DropNote {
        let count = state.droppedSinceLine
        let unannounced = state.unannouncedSinceLine
        state.droppedSinceLine = 0
        state.unannouncedSinceLine = 0
        state.lastDropLine = now
        return .log(count: count, unannounced: unannounced, total: state.dropped)
    }

    /// Does what a locked section left to do.
    private func finish(_ after: AfterLock) {
        if after.startInterval { scheduleFlush() }
        switch after.drops {
        case .nothing: break
        case .log(let count, let unannounced, let total):
            let behind = count - unannounced
            let causes = [
                behind > 0 ? "\(behind) because the daemon fell more than \(bufferSize) reports behind" : nil,
                unannounced > 0 ? "\(unannounced) from devices bluetoothd had not announced yet" : nil,
            ].compactMap { $0 }.joined(separator: ", ")
            logger?.warning(
                "scan: dropped \(count) report(s) since the last such line, \(total) since scanning started: \(causes)")
        case .schedule(let delay):
            schedule(after: delay) { [weak self] in self?.dropLineDue() }
        }
    }

    /// The interval after a drop line ended: says what was dropped meanwhile.
    private func dropLineDue() {
        let note = state.withLock { state -> DropNote in
            state.dropLineScheduled = false
            guard state.droppedSinceLine > 0 else { return .nothing }
            return takeDropLine(&state, now: .now)
        }
        finish(AfterLock(drops: note))
    }

    /// Runs `work` after `delay` on the connection's thread, or in a task when the
    /// connection is closed.
    private func schedule(after delay: Duration, _ work: @escaping @Sendable () -> Void) {
        guard !connection.schedule(after: delay, work) else { return }
        Task {
            try? await Task.sleep(for: delay)
            work()
        }
    }

    private func scheduleFlush() {
        // On the connection's thread, which is awake at this rate anyway: no task
        // and no timer thread per batch.
        schedule(after: coalescing) { [weak self] in self?.flush() }
    }

    /// Hands the gathered events to `events`.
    private func flush() {
        let drops = state.withLock { state in
            state.flushScheduled = false
            return hand(&state)
        }
        finish(AfterLock(drops: drops))
    }

    /// Yields the gathered events. Under the state lock, so that batches stay in
    /// order; the channel only resumes the consumer, it never calls back into us.
    private func hand(_ state: inout State) -> DropNote {
        noteDrops(channel.append(moving: &state.pending), &state)
    }

    /// An advertisement of a device the object manager does not hold: lost, and
    /// counted when it carries our company ID and names a device of our adapter.
    private func unannounced(_ path: DBusObjectPath, _ data: ManufacturerData?) {
        guard data?[companyID] != nil else { return }
        let note = state.withLock { state -> DropNote in
            guard let adapter = state.adapter, path.parent == adapter else { return .nothing }
            return noteDrops(1, &state, unannounced: true)
        }
        if !note.isNothing { finish(AfterLock(drops: note)) }
    }

    /// A device appeared or was heard again: a report when it carries our
    /// company ID and belongs to our adapter. One lock for the check, the
    /// bookkeeping and the queueing: this runs per advertisement.
    private func report(_ advertisement: DeviceAdvertisement) {
        guard let data = advertisement.manufacturerData[companyID] else { return }
        let receivedAt = ContinuousClock.now
        let after = state.withLock { state -> AfterLock in
            guard state.adapter == advertisement.adapter else { return AfterLock() }
            state.reports += 1
            let report = AdvertisementReport(
                identity: advertisement.identity, rssi: advertisement.rssi, companyID: companyID, data: data,
                receivedAt: receivedAt)
            return enqueue(.report(report), &state)
        }
        if after.startInterval || !after.drops.isNothing { finish(after) }
    }
}
