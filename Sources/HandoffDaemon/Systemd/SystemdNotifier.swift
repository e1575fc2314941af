#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Tells systemd how the service is doing, with the `sd_notify` datagram
/// protocol, implemented natively (no libsystemd).
///
/// systemd passes the address of its notification socket in `NOTIFY_SOCKET`
/// to services with `Type=notify`. Each message is one datagram of
/// newline-separated `VARIABLE=value` assignments. When `NOTIFY_SOCKET` is
/// unset (the daemon was started by hand, by a test, or by the demo), every
/// method is a silent no-op.
///
/// Lifecycle of a `Type=notify` service:
/// - ``ready(status:)`` once the socket is listening and BlueZ setup has begun;
///   until then `systemctl start` waits.
/// - ``watchdog()`` at least every ``watchdogInterval`` (use ``runWatchdog(isHealthy:)``).
/// - ``reloading(status:)`` when a reload starts (SIGHUP), then ``ready(status:)`` when done.
/// - ``stopping(status:)`` when shutdown begins.
public struct SystemdNotifier: Sendable {
    /// Where notifications go; nil when systemd did not ask for them.
    let address: NotifySocketAddress?
    /// Why `NOTIFY_SOCKET` could not be used, if it was set but is unusable.
    public let addressError: SystemdNotifyError?
    /// How often systemd expects ``watchdog()``: `WATCHDOG_USEC`, when it is set
    /// for this process (`WATCHDOG_PID`, if present, must be ours). Nil when
    /// there is no watchdog. Ping at least twice per interval.
    public let watchdogInterval: Duration?

    /// Reads `NOTIFY_SOCKET`, `WATCHDOG_USEC` and `WATCHDOG_PID` from the process environment.
    public init() {
        var environment: [String: String] = [:]
        for name in ["NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"] {
            if let value = getenv(name) { environment[name] = String(cString: value) }
        }
        self.init(environment: environment)
    }

    /// Reads the protocol's variables from `environment`; `processID` is
    /// compared with `WATCHDOG_PID`.
    public init(environment: [String: String], processID: pid_t = getpid()) {
        var address: NotifySocketAddress?
        var addressError: SystemdNotifyError?
        if let text = environment["NOTIFY_SOCKET"], !text.isEmpty {
            do throws(SystemdNotifyError) {
                address = try NotifySocketAddress(text)
            } catch {
                addressError = error
            }
        }
        self.address = address
        self.addressError = addressError
        self.watchdogInterval = address == nil ? nil : Self.watchdogInterval(environment, processID: processID)
    }

    /// True when systemd asked for notifications (and their address is usable).
    public var isEnabled: Bool { address != nil }

    /// The service is up: `READY=1`, with an optional status line.
    /// Also ends a reload started with ``reloading(status:)``.
    public func ready(status: String? = nil) throws(SystemdNotifyError) {
        try send(["READY=1"] + Self.statusLine(status))
    }

    /// A one-line, human-readable state shown by `systemctl status`: `STATUS=…`.
    public func status(_ text: String) throws(SystemdNotifyError) {
        try send(Self.statusLine(text))
    }

    /// A reload has begun: `RELOADING=1` with `MONOTONIC_USEC` (which systemd
    /// 253 and later require, and older versions ignore). Send ``ready(status:)`` when it is done.
    public func reloading(status: String? = nil) throws(SystemdNotifyError) {
        try send(["RELOADING=1", "MONOTONIC_USEC=\(Self.monotonicMicroseconds())"] + Self.statusLine(status))
    }

    /// Shutdown has begun: `STOPPING=1`.
    public func stopping(status: String? = nil) throws(SystemdNotifyError) {
        try send(["STOPPING=1"] + Self.statusLine(status))
    }

    /// Keeps the watchdog from firing: `WATCHDOG=1`.
    public func watchdog() throws(SystemdNotifyError) {
        try send(["WATCHDOG=1"])
    }

    /// Asks for more time to start, reload or stop: `EXTEND_TIMEOUT_USEC`.
    public func extendTimeout(by duration: Duration) throws(SystemdNotifyError) {
        try send(["EXTEND_TIMEOUT_USEC=\(Self.microseconds(duration))"])
    }

    /// Sends `assignments` (each `VARIABLE=value`, no newlines) as one datagram.
    /// Does nothing when notifications are off.
    public func send(_ assignments: [String]) throws(SystemdNotifyError) {
        guard let address else { return }
        let message = Array(assignments.joined(separator: "\n").utf8)

        let fd = socket(AF_UNIX, Self.datagramType, 0)
        guard fd >= 0 else { throw .system(call: "socket", errno: errno) }
        defer { close(fd) }
        var result: Int
        repeat {
            result = address.withSocketAddress { target, length in
                message.withUnsafeBytes { sendto(fd, $0.baseAddress, $0.count, Self.sendFlags, target, length) }
            }
        } while result < 0 && errno == EINTR
        guard result >= 0 else { throw .system(call: "sendto", errno: errno) }
    }

    // MARK: - Helpers

    private static func statusLine(_ status: String?) -> [String] {
        guard let status else { return [] }
        // A newline would start a new assignment.
        let line = status.map { $0.isNewline ? " " : String($0) }.joined()
        return ["STATUS=\(line)"]
    }

    private static func watchdogInterval(_ environment: [String: String], processID: pid_t) -> Duration? {
        guard let text = environment["WATCHDOG_USEC"], let usec = UInt64(text), usec > 0 else { return nil }
        if let pid = environment["WATCHDOG_PID"], !pid.isEmpty {
            guard let owner = pid_t(pid), owner == processID else { return nil }
        }
        return .microseconds(Int64(clamping: usec))
    }

    static func monotonicMicroseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000 + UInt64(now.tv_nsec) / 1_000
    }

    static func microseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        guard seconds >= 0 else { return 0 }
        return UInt64(seconds) * 1_000_000 + UInt64(attoseconds / 1_000_000_000_000)
    }

    #if canImport(Glibc)
    private static let datagramType = Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    private static let sendFlags = Int32(MSG_NOSIGNAL)
    #else
    private static let datagramType = SOCK_DGRAM
    private static let sendFlags: Int32 = 0
    #endif
}
