/// One pending wake-up, or none: setting it again replaces the one before.
///
/// The daemon's parts keep one for each thing they time (the next rotation,
/// the next expiry), so that an idle daemon has no timer at all.
struct OneShotTimer: Sendable {
    private var task: Task<Void, Never>?

    init() {}

    /// Runs `action` at `deadline` (on the continuous clock), unless set again or cancelled first.
    mutating func set(at deadline: ContinuousClock.Instant, _ action: @escaping @Sendable () async -> Void) {
        task?.cancel()
        task = Task {
            try? await Task.sleep(until: deadline, clock: .continuous)
            guard !Task.isCancelled else { return }
            await action()
        }
    }

    /// Sets it for `deadline`, or cancels it when there is none.
    mutating func set(at deadline: ContinuousClock.Instant?, _ action: @escaping @Sendable () async -> Void) {
        guard let deadline else { return cancel() }
        set(at: deadline, action)
    }

    mutating func cancel() {
        task?.cancel()
        task = nil
    }

    var isSet: Bool { task != nil }
}
