#if canImport(Glibc)
import Glibc
#endif
internal import CDBus
import Synchronization

/// The thread that runs one connection.
///
/// It blocks in `epoll_wait` on the sockets libdbus asks it to watch, on an
/// eventfd that other threads write to when they queue work, and with a
/// timeout equal to the nearest libdbus timeout (none at all when idle). So an
/// idle connection sleeps until the bus sends something or a task wants the
/// connection: there is no periodic polling.
///
/// Everything below `// MARK: Loop-confined state` is touched only on this
/// thread; work from other threads comes in through `enqueue`.
final class EventLoop: @unchecked Sendable {
    typealias Job = @Sendable () -> Void

    private let epollFD: Int32
    private let wakeFD: Int32
    private let queue = Mutex<(jobs: [Job], closed: Bool)>(([], false))
    /// The loop thread's `pthread_self()`, once it runs (0 before).
    private let loopThread = Atomic<UInt>(0)
    /// Set by the loop thread just before it exits.
    private let exited = Mutex<(done: Bool, waiters: [CheckedContinuation<Void, Never>])>((false, []))

    // MARK: Loop-confined state
    // Touched on the loop thread alone, and every iteration: the run-time
    // exclusivity check a class's `var` gets (a thread-local access set, per
    // access) is switched off for them, as it buys nothing on one thread.
    @exclusivity(unchecked) private var watchesByFD: [Int32: [OpaquePointer]] = [:]
    @exclusivity(unchecked) private var registeredFDs: Set<Int32> = []
    private struct Timer {
        let timeout: OpaquePointer
        var deadline: UInt64
    }
    @exclusivity(unchecked) private var timers: [Timer] = []
    /// Jobs waiting for a deadline (`enqueue(after:_:)`), in no particular order.
    @exclusivity(unchecked) private var delayed: [(deadline: UInt64, job: Job)] = []
    @exclusivity(unchecked) private var stopRequested = false
    /// Called once per iteration, after events and jobs: dispatches queued messages.
    @exclusivity(unchecked) var onIteration: (() -> Void)?
    /// Input batching (`DBusConnection.batchInput(within:)`).
    @exclusivity(unchecked) private var batcher = InputBatcher()
    /// Times a socket woke the loop (for tests and benchmarks).
    @exclusivity(unchecked) private(set) var inputWakes: UInt64 = 0
    /// Times the loop waited to gather input (for tests).
    var gathers: UInt64 { batcher.gathers }

    init() throws(DBusError) {
        let ep = epoll_create1(Int32(EPOLL_CLOEXEC))
        guard ep >= 0 else { throw DBusError(.failed, "epoll_create1: \(String(cString: strerror(errno)))") }
        let ev = eventfd(0, Int32(EFD_CLOEXEC | EFD_NONBLOCK))
        guard ev >= 0 else {
            close(ep)
            throw DBusError(.failed, "eventfd: \(String(cString: strerror(errno)))")
        }
        epollFD = ep
        wakeFD = ev
        var event = epoll_event()
        event.events = EPOLLIN.rawValue
        event.data.fd = ev
        epoll_ctl(ep, EPOLL_CTL_ADD, ev, &event)
    }

    deinit {
        close(wakeFD)
        close(epollFD)
    }

    // MARK: Any thread

    /// Queues `job` to run on the loop thread and wakes the loop.
    /// - Returns: false when the loop has exited and the job will never run.
    @discardableResult
    func enqueue(_ job: @escaping Job) -> Bool {
        let (accepted, wasEmpty) = queue.withLock { queue in
            if queue.closed { return (false, false) }
            queue.jobs.append(job)
            return (true, queue.jobs.count == 1)
        }
        if wasEmpty { wake() }
        return accepted
    }

    /// Queues `job` to run on the loop thread once `delay` has passed. The loop
    /// wakes for it only if nothing else wakes it first: no thread of its own.
    /// - Returns: false when the loop has exited and the job will never run.
    @discardableResult
    func enqueue(after delay: Duration, _ job: @escaping Job) -> Bool {
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let deadline = Self.now() + UInt64(nanoseconds)
        if isLoopThread {
            delayed.append((deadline, job))
            return true
        }
        return enqueue { [unowned self] in self.delayed.append((deadline, job)) }
    }

    /// Wakes the loop from `epoll_wait`.
    ///
    /// On the loop thread itself this does nothing: the loop runs its jobs and
    /// dispatches libdbus's queue before it waits again. That matters because
    /// libdbus calls its wakeup function (which lands here) for every message it
    /// queues while reading, so a busy connection would otherwise pay a `write`
    /// and an extra `epoll_wait` round per received message.
    func wake() {
        if isLoopThread { return }
        var one: UInt64 = 1
        _ = write(wakeFD, &one, 8)
    }

    /// Starts the thread. `body` runs first on it (connection setup), then the loop.
    func start(_ setup: @escaping @Sendable () -> Void) throws(DBusError) {
        final class Start: @unchecked Sendable {
            let loop: EventLoop
            let setup: @Sendable () -> Void
            init(loop: EventLoop, setup: @escaping @Sendable () -> Void) {
                self.loop = loop
                self.setup = setup
            }
        }
        var attributes = pthread_attr_t()
        pthread_attr_init(&attributes)
        pthread_attr_setdetachstate(&attributes, Int32(PTHREAD_CREATE_DETACHED))
        defer { pthread_attr_destroy(&attributes) }
        var thread = pthread_t()
        let context = Unmanaged.passRetained(Start(loop: self, setup: setup)).toOpaque()
        let rc = pthread_create(
            &thread, &attributes,
            { raw in
                let start = Unmanaged<Start>.fromOpaque(raw!).takeRetainedValue()
                cdbus_set_thread_name("dbus-loop")
                start.loop.loopThread.store(pthread_self(), ordering: .relaxed)
                start.setup()
                start.loop.run()
                return nil
            }, context)
        guard rc == 0 else {
            Unmanaged<Start>.fromOpaque(context).release()
            throw DBusError(.failed, "pthread_create: \(String(cString: strerror(rc)))")
        }
    }

    /// Waits until the loop thread has exited.
    func waitUntilExited() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let done = exited.withLock { state in
                if state.done { return true }
                state.waiters.append(continuation)
                return false
            }
            if done { continuation.resume() }
        }
    }

    /// True when called on this loop's own thread.
    var isLoopThread: Bool {
        pthread_self() == loopThread.load(ordering: .relaxed)
    }

    // MARK: Loop thread

    /// Asks the loop to exit after the current iteration. Loop thread only.
    func requestStop() { stopRequested = true }

    /// Notes an interactive use of the connection (see `InputBatcher`). Loop thread only.
    func interacted() {
        if batcher.window > 0 { batcher.interacted(at: Self.now()) }
    }

    /// Sets the input batching window (0: off). Loop thread only.
    func setBatchWindow(nanoseconds: UInt64) {
        batcher.setWindow(nanoseconds: nanoseconds)
    }

    /// While messages stream in and the socket is drained, waits out the batcher's window (not
    /// when jobs wait, nor beyond the next timer or delayed job). The wait watches the wake
    /// descriptor alone, so a job queued meanwhile ends it at once.
    private func gatherInput() {
        var next: UInt64?
        for timer in timers { next = min(next ?? .max, timer.deadline) }
        for entry in delayed { next = min(next ?? .max, entry.deadline) }
        guard let until = batcher.gatherUntil(now: Self.now(), nextDeadline: next) else { return }
        var wake = pollfd(fd: wakeFD, events: Int16(POLLIN), revents: 0)
        while true {
            let now = Self.now()
            guard until > now else { return }
            // Whole milliseconds, rounded up: the window ends no earlier than asked.
            let timeout = Int32((until - now + 999_999) / 1_000_000)
            let ready = poll(&wake, 1, timeout)
            if ready < 0 && errno == EINTR { continue }
            return
        }
    }

    private func run() {
        var events = [epoll_event](repeating: epoll_event(), count: 32)
        while true {
            runJobs()
            fireExpiredTimers()
            runDueDelayedJobs()
            onIteration?()
            if stopRequested { break }
            let hasJobs = queue.withLock { !$0.jobs.isEmpty }
            var n: Int32
            if batcher.streaming && !hasJobs {
                // Read on while input is waiting (libdbus reads a few kilobytes per
                // wake); once the socket is drained, gather the next window's worth.
                n = epoll_wait(epollFD, &events, Int32(events.count), 0)
                if n == 0 {
                    gatherInput()
                    let timeout = queue.withLock { !$0.jobs.isEmpty } ? 0 : millisecondsUntilNextTimer()
                    n = epoll_wait(epollFD, &events, Int32(events.count), timeout)
                }
            } else {
                let timeout = hasJobs ? 0 : millisecondsUntilNextTimer()
                n = epoll_wait(epollFD, &events, Int32(events.count), timeout)
            }
            if n < 0 {
                if errno == EINTR { continue }
                break
            }
            for i in 0..<Int(n) { handle(events[i]) }
        }
        onIteration = nil
        // Jobs that raced with shutdown still run, so that whoever waits on them
        // hears "disconnected" instead of hanging.
        let late = queue.withLock { queue in
            queue.closed = true
            defer { queue.jobs.removeAll() }
            return queue.jobs
        }
        for job in late { job() }
        // Delayed jobs too, early rather than never.
        let delayedJobs = delayed.map(\.job)
        delayed.removeAll()
        for job in delayedJobs { job() }
        let waiters = exited.withLock { state in
            state.done = true
            defer { state.waiters.removeAll() }
            return state.waiters
        }
        for waiter in waiters { waiter.resume() }
    }

    private func runJobs() {
        let jobs = queue.withLock { queue -> [Job] in
            // Taking an empty list would still make the queue allocate a new one.
            guard !queue.jobs.isEmpty else { return [] }
            defer { queue.jobs.removeAll(keepingCapacity: true) }
            return queue.jobs
        }
        guard !jobs.isEmpty else { return }
        interacted()
        for job in jobs { job() }
    }

    private func handle(_ event: epoll_event) {
        let fd = event.data.fd
        if fd == wakeFD {
            var counter: UInt64 = 0
            _ = read(wakeFD, &counter, 8)
            return
        }
        var condition: UInt32 = 0
        if event.events & EPOLLIN.rawValue != 0 { condition |= DBUS_WATCH_READABLE.rawValue }
        if event.events & EPOLLOUT.rawValue != 0 { condition |= DBUS_WATCH_WRITABLE.rawValue }
        if event.events & EPOLLERR.rawValue != 0 { condition |= DBUS_WATCH_ERROR.rawValue }
        if event.events & EPOLLHUP.rawValue != 0 { condition |= DBUS_WATCH_HANGUP.rawValue }
        guard let watches = watchesByFD[fd] else { return }
        if condition & DBUS_WATCH_READABLE.rawValue != 0 {
            inputWakes &+= 1
            if batcher.window > 0 { batcher.inputWoke(at: Self.now()) }
        }
        let always = DBUS_WATCH_ERROR.rawValue | DBUS_WATCH_HANGUP.rawValue
        for watch in watches {
            // A watch handled earlier in this loop may have removed this one.
            guard watchesByFD[fd]?.contains(watch) == true, dbus_watch_get_enabled(watch) != 0 else { continue }
            let wanted = dbus_watch_get_flags(watch) | always
            let flags = condition & wanted
            if flags != 0 { _ = dbus_watch_handle(watch, flags) }
        }
    }

    // MARK: libdbus watches

    func addWatch(_ watch: OpaquePointer) {
        let fd = dbus_watch_get_unix_fd(watch)
        watchesByFD[fd, default: []].append(watch)
        updateInterest(fd)
    }

    func removeWatch(_ watch: OpaquePointer) {
        let fd = dbus_watch_get_unix_fd(watch)
        watchesByFD[fd]?.removeAll { $0 == watch }
        if watchesByFD[fd]?.isEmpty == true { watchesByFD[fd] = nil }
        updateInterest(fd)
    }

    func watchToggled(_ watch: OpaquePointer) {
        updateInterest(dbus_watch_get_unix_fd(watch))
    }

    /// Registers `fd` with epoll for the union of its enabled watches, or removes it
    /// when none is enabled (so a hung-up socket cannot make the loop spin).
    private func updateInterest(_ fd: Int32) {
        var mask: UInt32 = 0
        for watch in watchesByFD[fd] ?? [] where dbus_watch_get_enabled(watch) != 0 {
            let flags = dbus_watch_get_flags(watch)
            if flags & DBUS_WATCH_READABLE.rawValue != 0 { mask |= EPOLLIN.rawValue }
            if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { mask |= EPOLLOUT.rawValue }
        }
        var event = epoll_event()
        event.events = mask
        event.data.fd = fd
        if mask == 0 {
            if registeredFDs.remove(fd) != nil { epoll_ctl(epollFD, EPOLL_CTL_DEL, fd, &event) }
        } else if registeredFDs.contains(fd) {
            epoll_ctl(epollFD, EPOLL_CTL_MOD, fd, &event)
        } else {
            registeredFDs.insert(fd)
            epoll_ctl(epollFD, EPOLL_CTL_ADD, fd, &event)
        }
    }

    // MARK: libdbus timeouts

    func addTimeout(_ timeout: OpaquePointer) {
        timers.removeAll { $0.timeout == timeout }
        guard dbus_timeout_get_enabled(timeout) != 0 else { return }
        timers.append(Timer(timeout: timeout, deadline: Self.now() + Self.nanoseconds(of: timeout)))
    }

    func removeTimeout(_ timeout: OpaquePointer) {
        timers.removeAll { $0.timeout == timeout }
    }

    func timeoutToggled(_ timeout: OpaquePointer) {
        addTimeout(timeout)
    }

    private func fireExpiredTimers() {
        guard !timers.isEmpty else { return }
        let now = Self.now()
        let due = timers.filter { $0.deadline <= now }.map(\.timeout)
        for timeout in due {
            // An earlier handler may have removed or re-armed this one.
            guard let index = timers.firstIndex(where: { $0.timeout == timeout }), timers[index].deadline <= now
            else { continue }
            timers[index].deadline = now + Self.nanoseconds(of: timeout)
            _ = dbus_timeout_handle(timeout)
        }
    }

    private func runDueDelayedJobs() {
        guard !delayed.isEmpty else { return }
        let now = Self.now()
        guard delayed.contains(where: { $0.deadline <= now }) else { return }
        var due: [Job] = []
        delayed.removeAll { entry in
            guard entry.deadline <= now else { return false }
            due.append(entry.job)
            return true
        }
        for job in due { job() }
    }

    private func millisecondsUntilNextTimer() -> Int32 {
        var next: UInt64?
        for timer in timers { next = min(next ?? timer.deadline, timer.deadline) }
        for entry in delayed { next = min(next ?? entry.deadline, entry.deadline) }
        guard let next else { return -1 }
        let now = Self.now()
        if next <= now { return 0 }
        return Int32(clamping: (next - now + 999_999) / 1_000_000)
    }

    private static func nanoseconds(of timeout: OpaquePointer) -> UInt64 {
        UInt64(max(0, dbus_timeout_get_interval(timeout))) * 1_000_000
    }

    static func now() -> UInt64 {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
    }
}
