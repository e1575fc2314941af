#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A child process for tests: spawned with a clean signal mask and default
/// signal handlers (a test runner may block SIGTERM, and children inherit
/// that), and killed by PID with SIGKILL when the test is done with it.
public final class TestProcess: @unchecked Sendable {
    public let pid: pid_t
    public let executable: String
    private let lock = NSLock()
    private var reaped = false
    private var status: Int32 = 0

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - environment: the whole environment; nil inherits this process's.
    ///   - stdout, stderr: file descriptors to give the child (default: inherit).
    ///   - extraDescriptors: `(parentFD, childFD)` pairs to dup into the child.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdout: Int32? = nil, stderr: Int32? = nil, extraDescriptors: [(Int32, Int32)] = []
    ) throws {
        self.executable = executable
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdout { posix_spawn_file_actions_adddup2(&actions, stdout, 1) }
        if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr, 2) }
        for (parent, child) in extraDescriptors { posix_spawn_file_actions_adddup2(&actions, parent, child) }

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETPGROUP))
        posix_spawnattr_setpgroup(&attributes, 0)

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, env)
        guard rc == 0 else {
            throw TestFailure("cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        pid = child
    }

    deinit { kill() }

    /// Sends `signal` to the process.
    public func signal(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if !reaped { Glibc.kill(pid, signal) }
    }

    /// Kills the process with SIGKILL and reaps it. Safe to call twice.
    public func kill() {
        signal(SIGKILL)
        _ = waitForExit()
    }

    /// True while the process has not exited.
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        if reaped { return false }
        var s: Int32 = 0
        let r = waitpid(pid, &s, WNOHANG)
        if r == pid {
            reaped = true
            status = s
            return false
        }
        return true
    }

    /// Blocks until the process exits and returns its raw wait status.
    @discardableResult
    public func waitForExit() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        if reaped { return status }
        var s: Int32 = 0
        while waitpid(pid, &s, 0) < 0 && errno == EINTR {}
        reaped = true
        status = s
        return s
    }

    /// Waits up to `timeout` for the process to exit; returns its exit code, or nil on timeout
    /// or death by signal.
    public func exitCode(within timeout: Duration) async -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if !isRunning {
                let s = waitForExit()
                return (s & 0x7f) == 0 ? (s >> 8) & 0xff : nil
            }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}

/// An error a test helper throws with a plain message.
public struct TestFailure: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}
