#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A client end of a Unix stream socket with plain system calls, for what a
/// well-behaved client library never does: half-closing, pipelining thousands
/// of requests. Blocking calls run on threads of their own, never on the
/// cooperative pool the daemon needs.
final class RawSocket: @unchecked Sendable {
    let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw RigError("socket: \(errno)") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            for (index, byte) in path.utf8.enumerated() where index < buffer.count - 1 { buffer[index] = byte }
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else { throw RigError("connect \(path): \(errno)") }
    }

    deinit { close(fd) }

    /// Writes all of `bytes` (blocking, on its own thread).
    func write(_ bytes: [UInt8]) async throws {
        try await Self.onThread { [fd] in
            var offset = 0
            while offset < bytes.count {
                let written = bytes[offset...].withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
                guard written > 0 else { throw RigError("write: \(errno)") }
                offset += written
            }
        }
    }

    /// shutdown(SHUT_WR): "I have nothing more to say", as `nc -N` does.
    func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// Reads lines until `count` have come, end of file, or `timeout` passes.
    /// - Returns: the lines, and whether end of file was reached.
    func readLines(count: Int = .max, timeout: Duration = .seconds(10)) async throws -> (lines: [String], eof: Bool) {
        try await Self.onThread { [fd] in
            let deadline = ContinuousClock.now + timeout
            var pending: [UInt8] = []
            var lines: [String] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while lines.count < count {
                let left = deadline - ContinuousClock.now
                guard left > .zero else { return (lines, false) }
                var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                let ready = poll(&descriptor, 1, Int32(left.components.seconds * 1000 + 50))
                guard ready > 0 else { continue }
                let got = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
                if got <= 0 { return (lines, true) }
                pending += buffer[0..<got]
                while let newline = pending.firstIndex(of: 10) {
                    lines.append(String(decoding: pending[..<newline], as: UTF8.self))
                    pending.removeSubrange(...newline)
                }
            }
            return (lines, false)
        }
    }

    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread { continuation.resume(with: Result { try body() }) }.start()
        }
    }
}
