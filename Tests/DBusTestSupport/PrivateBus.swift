#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A private `dbus-daemon` for one test.
///
/// It listens on a socket in a fresh temporary directory, lets every
/// connection own any name and talk to anyone, and is killed by PID (SIGKILL)
/// when the test drops it, so no bus outlives its test.
public final class PrivateBus: Sendable {
    /// The address to connect to, such as `unix:path=/tmp/…/bus`.
    public let address: String
    /// The temporary directory holding the socket and config.
    public let directory: String
    private let process: TestProcess

    public var pid: pid_t { process.pid }

    /// Starts a bus and waits until it listens.
    public init() throws {
        var template = Array("/tmp/handoff-bus-XXXXXX".utf8CString)
        guard let dir = mkdtemp(&template) else { throw TestFailure("mkdtemp failed") }
        directory = String(cString: dir)
        let config = """
            <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
             "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
            <busconfig>
              <type>session</type>
              <listen>unix:path=\(directory)/bus</listen>
              <auth>EXTERNAL</auth>
              <policy context="default">
                <allow send_destination="*" eavesdrop="true"/>
                <allow eavesdrop="true"/>
                <allow own="*"/>
                <allow user="*"/>
              </policy>
              <limit name="max_replies_per_connection">50000</limit>
              <limit name="max_match_rules_per_connection">50000</limit>
            </busconfig>
            """
        try config.write(toFile: "\(directory)/bus.conf", atomically: true, encoding: .utf8)
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw TestFailure("pipe failed") }
        // Close-on-exec, so that children spawned meanwhile by other tests do not hold it.
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        defer { close(fds[0]) }
        let candidates = ["/usr/bin/dbus-daemon", "/bin/dbus-daemon"]
        let daemon = candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
        // The daemon's own complaints (such as "Failed to set fd limit") go to a log
        // beside the socket rather than into the test output.
        let log = open("\(directory)/bus.log", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { if log >= 0 { close(log) } }
        do {
            process = try TestProcess(
                daemon,
                ["--config-file=\(directory)/bus.conf", "--nofork", "--nopidfile", "--nosyslog", "--print-address=3"],
                stderr: log >= 0 ? log : nil, extraDescriptors: [(fds[1], 3)])
        } catch {
            close(fds[1])
            throw error
        }
        close(fds[1])
        // Read the address line the daemon prints once it listens.
        var line = [UInt8]()
        var pfd = pollfd(fd: fds[0], events: Int16(POLLIN), revents: 0)
        let deadline = Date().addingTimeInterval(10)
        while !line.contains(UInt8(ascii: "\n")) {
            let remaining = Int32(max(0, deadline.timeIntervalSinceNow * 1000))
            guard poll(&pfd, 1, remaining) > 0 else {
                process.kill()
                throw TestFailure("dbus-daemon did not print its address within 10 s")
            }
            var buffer = [UInt8](repeating: 0, count: 512)
            let n = read(fds[0], &buffer, buffer.count)
            guard n > 0 else {
                process.kill()
                throw TestFailure("dbus-daemon exited before printing its address")
            }
            line += buffer[0..<n]
        }
        address = String(decoding: line.prefix { $0 != UInt8(ascii: "\n") }, as: UTF8.self)
    }

    deinit {
        stop()
    }

    /// Kills the bus (SIGKILL, by PID) and removes its directory. Safe to call twice.
    public func stop() {
        process.kill()
        try? FileManager.default.removeItem(atPath: directory)
    }

    /// Environment for a child process that should use this bus as both its
    /// session and its system bus.
    public var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment
        env["DBUS_SESSION_BUS_ADDRESS"] = address
        env["DBUS_SYSTEM_BUS_ADDRESS"] = address
        return env
    }
}
