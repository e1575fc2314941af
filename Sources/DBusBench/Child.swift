// DBusBench report: the role processes it spawns.
#if canImport(Glibc)
import Glibc
#endif
import DBus
import Foundation

/// A child process with its stdout in a pipe, killed by PID when done with.
final class Child {
    let pid: pid_t
    let label: String
    private let output: Int32
    private var reaped = false

    init(_ executable: String, _ arguments: [String], environment: [String: String], label: String) throws {
        self.label = label
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw DBusError(.failed, "pipe failed") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
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
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, env)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw DBusError(.failed, "cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        pid = child
        output = fds[0]
    }

    deinit {
        kill()
        close(output)
    }

    var isRunning: Bool {
        if reaped { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reaped = true
            return false
        }
        return true
    }

    func kill() {
        guard !reaped else { return }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
    }

    /// Waits for the process to exit (killing it after `limit` seconds) and returns its stdout.
    func finish(within limit: Double) async -> String {
        let deadline = now() + limit
        while isRunning && now() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        kill()
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let flags = fcntl(output, F_GETFL)
        _ = fcntl(output, F_SETFL, flags | O_NONBLOCK)
        while true {
            let n = read(output, &buffer, buffer.count)
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// True once `pid` (a child not yet reaped) has exited: it is a zombie, or gone.
func hasExited(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return true }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
}
