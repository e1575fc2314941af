/// How a `HandoffClient` reconnects after it lost handoffd (the daemon restarted,
/// was upgraded, or crashed).
///
/// The delay before attempt *n* (counting from 1) is `initialDelay · multiplierⁿ⁻¹`,
/// capped at `maximumDelay`, with up to ±`jitter` of it added at random so that many
/// clients do not all knock at once. The client waits between attempts without
/// holding a thread.
public struct ReconnectPolicy: Sendable, Hashable {
    /// The delay before the first attempt after the connection was lost.
    public var initialDelay: Duration
    /// The longest delay between two attempts.
    public var maximumDelay: Duration
    /// How much each delay grows over the previous one (at least 1).
    public var multiplier: Double
    /// The random part of each delay, as a fraction of it (0 to 1).
    public var jitter: Double
    /// How many attempts in a row may fail before the client gives up and closes;
    /// nil tries for as long as the client lives (at most one attempt per `maximumDelay`).
    public var maximumAttempts: Int?

    /// A policy; out-of-range values are clamped (a multiplier below 1 is 1, jitter is 0 to 1).
    public init(
        initialDelay: Duration = .milliseconds(50), maximumDelay: Duration = .seconds(5), multiplier: Double = 2,
        jitter: Double = 0.2, maximumAttempts: Int? = nil
    ) {
        self.initialDelay = initialDelay
        self.maximumDelay = max(maximumDelay, initialDelay)
        self.multiplier = max(multiplier, 1)
        self.jitter = min(max(jitter, 0), 1)
        self.maximumAttempts = maximumAttempts.map { max($0, 0) }
    }

    /// 50 ms, doubling up to 5 s, ±20 %, for ever.
    public static let `default` = ReconnectPolicy()

    /// Never reconnects: the client closes when it loses the daemon.
    public static let never = ReconnectPolicy(maximumAttempts: 0)

    /// The delay before attempt `attempt` (1 for the first), without jitter.
    public func baseDelay(forAttempt attempt: Int) -> Duration {
        var delay = initialDelay
        for _ in 1..<max(attempt, 1) {
            delay = delay * multiplier
            if delay >= maximumDelay { return maximumDelay }
        }
        return min(delay, maximumDelay)
    }

    /// The delay before attempt `attempt`, with jitter.
    public func delay(forAttempt attempt: Int) -> Duration {
        let base = baseDelay(forAttempt: attempt)
        guard jitter > 0 else { return base }
        return base * Double.random(in: (1 - jitter)...(1 + jitter))
    }
}
