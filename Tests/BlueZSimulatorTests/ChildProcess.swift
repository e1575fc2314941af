#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Dispatch
import Foundation

/// A child process (via `TestProcess`) whose stdout is read line by line.
final class ChildProcess: Sendable {
    let process: TestProcess
    private let output: Int32

    /// Starts `executable`; stderr goes to this process's stderr.
    init(_ executable: String, _ arguments: [String], environment: [String: String]? = nil) throws {
        var fds: [Int32] = [0, 0]
        // Close-on-exec, so that other children spawned meanwhile do not hold the write end open.
        guard pipe(&fds) == 0 else { throw TestFailure("pipe failed") }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        do {
            process = try TestProcess(executable, arguments, environment: environment, stdout: fds[1])
        } catch {
            close(fds[0])
            close(fds[1])
            throw error
        }
        close(fds[1])
        output = fds[0]
    }

    deinit {
        process.kill()
        close(output)
    }

    /// Everything the child printed until it closed stdout (exited), or until `timeout`.
    /// Reads on a Dispatch thread, never blocking the tasks' cooperative pool.
    func readAll(timeout: Duration) async -> String {
        await Self.offPool { self.blockingReadAll(timeout: timeout) }
    }

    /// The first line the child prints, or nil if none within `timeout`.
    func readLine(timeout: Duration) async -> String? {
        await Self.offPool { self.blockingReadLine(timeout: timeout) }
    }

    private static func offPool<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            DispatchQueue.global().async { continuation.resume(returning: body()) }
        }
    }

    private func blockingReadAll(timeout: Duration) -> String {
        var data = [UInt8]()
        let deadline = ContinuousClock.now + timeout
        var pfd = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        while ContinuousClock.now < deadline {
            let (seconds, attoseconds) = (deadline - ContinuousClock.now).components
            let milliseconds = Int32(clamping: seconds * 1000 + attoseconds / 1_000_000_000_000_000)
            guard poll(&pfd, 1, max(1, milliseconds)) > 0 else { continue }
            var buffer = [UInt8](repeating: 0, count: 4096)
            let count = read(output, &buffer, buffer.count)
            if count <= 0 { break }
            data += buffer[0..<count]
        }
        return String(decoding: data, as: UTF8.self)
    }

    private func blockingReadLine(timeout: Duration) -> String? {
        var line = [UInt8]()
        let deadline = ContinuousClock.now + timeout
        var pfd = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        while ContinuousClock.now < deadline {
            guard poll(&pfd, 1, 50) > 0 else { continue }
            var byte: UInt8 = 0
            guard read(output, &byte, 1) == 1 else { return nil }
            if byte == UInt8(ascii: "\n") { return String(decoding: line, as: UTF8.self) }
            line.append(byte)
        }
        return nil
    }

    /// Where the package's executables are: next to the test bundle.
    static func builtProduct(_ name: String) -> String? {
        let testBinary = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = testBinary.deletingLastPathComponent()
        for _ in 0..<4 {
            let candidate = directory.appendingPathComponent(name).path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
            directory = directory.deletingLastPathComponent()
        }
        return nil
    }
}
