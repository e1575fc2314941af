import Logging
import Synchronization

/// Keeps one local user from flooding the journal: at most `burst` warnings
/// about a uid per `window`; the rest are counted and summed up in one line
/// when the next warning about that uid is let through.
final class WarningLimiter: Sendable {
    let burst: Int
    let window: Duration
    private let state = Mutex<[UInt32?: Bucket]>([:])

    private struct Bucket {
        var started: ContinuousClock.Instant
        var sent = 0
        var suppressed = 0
    }

    init(burst: Int = 5, window: Duration = .seconds(60)) {
        self.burst = burst
        self.window = window
    }

    /// Logs `message` at warning level unless `uid` (nil: unknown) had its share of this window.
    func warn(_ logger: Logger, uid: UInt32?, _ message: @autoclosure () -> String, now: ContinuousClock.Instant = .now) {
        let (allowed, suppressedBefore) = state.withLock { buckets -> (Bool, Int) in
            var bucket = buckets[uid] ?? Bucket(started: now)
            var carried = 0
            if now - bucket.started >= window {
                carried = bucket.suppressed
                bucket = Bucket(started: now)
            }
            defer { buckets[uid] = bucket }
            guard bucket.sent < burst else {
                bucket.suppressed += 1
                return (false, 0)
            }
            bucket.sent += 1
            // Forget quiet users, so the table stays as small as the set of active ones.
            if buckets.count > 1024 { buckets = buckets.filter { now - $0.value.started < window } }
            return (true, carried)
        }
        guard allowed else { return }
        let who = uid.map { "uid \($0)" } ?? "unknown peers"
        if suppressedBefore > 0 {
            logger.warning("\(suppressedBefore) more warnings about \(who) were not logged")
        }
        logger.warning("\(message())")
    }
}
