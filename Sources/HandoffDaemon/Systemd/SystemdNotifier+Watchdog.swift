extension SystemdNotifier {
    /// Pings the watchdog at half of ``watchdogInterval`` until the calling
    /// task is cancelled. Returns at once when systemd set no watchdog.
    ///
    /// - Parameter isHealthy: asked before each ping; when it returns false the
    ///   ping is skipped, and systemd kills and restarts the service once a whole
    ///   interval passes without one. Make it prove that the parts that can hang
    ///   (the event loop, the registry actor) still answer, not merely that the
    ///   process exists. Keep it short: a check that takes longer than half the
    ///   interval delays the next ping.
    public func runWatchdog(isHealthy: @Sendable () async -> Bool = { true }) async {
        guard let interval = watchdogInterval else { return }
        let period = interval / 2
        let clock = SuspendingClock()  // CLOCK_MONOTONIC, like systemd's own timer
        var next = clock.now
        while !Task.isCancelled {
            if await isHealthy() {
                try? watchdog()
            }
            next = next.advanced(by: period)
            if next < clock.now { next = clock.now.advanced(by: period) }
            do {
                try await clock.sleep(until: next)
            } catch {
                return
            }
        }
    }
}
