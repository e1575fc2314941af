#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A child process for tests: spawned with a clean signal mask and default
/// signal handlers (a test runner may block SIGTERM, and children inherit
/// that), and killed by PID with SIGKILL when the test is done with it.
///
/// It also dies with the test process. A test runner that crashes, or is killed
/// (by a CI timeout, or ^C), runs no deinit, so a plain child would outlive it: a
/// `dbus-daemon` per test, left behind. So the child is started through `/bin/sh`,
/// which forks a watcher holding the read end of a "lifeline" pipe and then
/// `exec`s the program (keeping its PID, so `pid`, `signal` and the exit status
/// are the program's own). Only this object holds the pipe's write end; when it
/// closes, however this process ends, the watcher kills the program. The watcher
/// shares the program's process group, and `kill` ends both.
public final class TestProcess: @unchecked Sendable {
    public let pid: pid_t
    public let executable: String
    private let lock = NSLock()
    private var reaped = false
    private var status: Int32 = 0
    /// The write end of the lifeline; -1 once closed.
    private var lifeline: Int32

    /// The descriptor the watcher reads the lifeline on (sh redirections take one digit).
    private static let lifelineFD: Int32 = 9

    /// Starts `executable` with `arguments`.
    /// - Parameters:
    ///   - environment: the whole environment; nil inherits this process's.
    ///   - stdout, stderr: file descriptors to give the child (default: inherit).
    ///   - extraDescriptors: `(parentFD, childFD)` pairs to dup into the child; child
    ///     descriptors must be below 9.
    public init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil,
        stdout: Int32? = nil, stderr: Int32? = nil, extraDescriptors: [(Int32, Int32)] = []
    ) throws {
        self.executable = executable
        guard access(executable, X_OK) == 0 else {
            throw TestFailure("cannot start \(executable): \(String(cString: strerror(errno)))")
        }
        precondition(extraDescriptors.allSatisfy { $0.1 < Self.lifelineFD }, "child descriptors must be below 9")

        var pipeFDs: [Int32] = [0, 0]
        guard pipe(&pipeFDs) == 0 else { throw TestFailure("pipe failed") }
        _ = fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC)
        defer { close(pipeFDs[0]) }

        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let stdout { posix_spawn_file_actions_adddup2(&actions, stdout, 1) }
        if let stderr { posix_spawn_file_actions_adddup2(&actions, stderr, 2) }
        for (parent, child) in extraDescriptors { posix_spawn_file_actions_adddup2(&actions, parent, child) }
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[0], Self.lifelineFD)
        // Nothing above the lifeline: descriptors this process opened without
        // close-on-exec (pipes of other tests' children, say) must not be held open
        // by this child, or by its watcher for as long as this object lives.
        _ = Self.closeFrom?(&actions, Self.lifelineFD + 1)

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

        // The watcher lets go of every descriptor but the lifeline (so that a reader
        // of the program's stdout still sees end-of-file when it exits), waits
        // for end-of-file on the lifeline, and kills the program: `$$` is the shell's
        // PID, which `exec` hands to the program.
        let closes = (0..<Self.lifelineFD).map { "\($0)>&-" }.joined(separator: " ")
        let script = "(exec \(closes); read line <&9; kill -9 $$) & exec \"$@\" 9<&-"
        let argv = (["/bin/sh", "-c", script, "sh", executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, "/bin/sh", &actions, &attributes, argv, env)
        guard rc == 0 else {
            close(pipeFDs[1])
            throw TestFailure("cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        pid = child
        lifeline = pipeFDs[1]
    }

    deinit { kill() }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34 and later), which
    /// Swift's Glibc module does not declare.
    private static let closeFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(nil, "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(
            symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// Sends `signal` to the process.
    public func signal(_ signal: Int32) {
        lock.lock()
        defer { lock.unlock() }
        if !reaped { Glibc.kill(pid, signal) }
    }

    /// Kills the process with SIGKILL and reaps it. Safe to call twice.
    public func kill() {
        lock.lock()
        defer { lock.unlock() }
        if !reaped { Glibc.kill(-pid, SIGKILL) }
        reapLocked(blocking: true)
    }

    /// True while the process has not exited.
    public var isRunning: Bool {
        lock.lock()
        defer { lock.unlock() }
        return !reapLocked(blocking: false)
    }

    /// Blocks until the process exits and returns its raw wait status.
    @discardableResult
    public func waitForExit() -> Int32 {
        lock.lock()
        defer { lock.unlock() }
        reapLocked(blocking: true)
        return status
    }

    /// Reaps the process if it has exited (waiting for that when `blocking`). Before
    /// reaping, kills what is left of its group (the watcher), so that nothing can
    /// signal the PID once it is free for reuse. Returns true once reaped.
    @discardableResult
    private func reapLocked(blocking: Bool) -> Bool {
        if reaped { return true }
        var info = siginfo_t()
        while true {
            let rc = waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT | (blocking ? 0 : WNOHANG))
            if rc == 0 { break }
            if errno == EINTR { continue }
            // ECHILD: already reaped elsewhere; nothing more to wait for.
            reaped = true
            closeLifeline()
            return true
        }
        // With WNOHANG and nothing to report, waitid leaves the zeroed record alone.
        guard info.si_signo == SIGCHLD else { return false }
        Glibc.kill(-pid, SIGKILL)
        var s: Int32 = 0
        while waitpid(pid, &s, 0) < 0 && errno == EINTR {}
        reaped = true
        status = s
        closeLifeline()
        return true
    }

    private func closeLifeline() {
        if lifeline >= 0 {
            close(lifeline)
            lifeline = -1
        }
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
