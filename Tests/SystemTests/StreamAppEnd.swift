#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import Synchronization

/// A test app's end of a continuation stream: a connection to the socket handoffd named in `continued` or
/// `streamOpened`, with blocking reads and writes on threads of their own (never on the cooperative pool).
final class StreamAppEnd: @unchecked Sendable {
    let fd: Int32
    private let closed = Mutex(false)

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard result == 0 else {
            let code = errno
            Glibc.close(fd)
            throw TestFailure("connect to \(path) failed: errno \(code)")
        }
    }

    deinit { close() }

    /// Closes the app's end (both directions; unread bytes make the peer's reads fail with ECONNRESET).
    func close() {
        guard !closed.withLock({ was in defer { was = true }; return was }) else { return }
        Glibc.close(fd)
    }

    /// Runs `body` on a thread of its own.
    static func onThread<T: Sendable>(_ body: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { continuation in
            Thread { continuation.resume(returning: body()) }.start()
        }
    }

    /// Writes everything, then (with `end`) shuts the write side: the end of this app's direction.
    func write(_ bytes: [UInt8], end: Bool = true) async -> Bool {
        let fd = fd
        return await Self.onThread {
            var offset = 0
            while offset < bytes.count {
                let n = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, min($0.count, 65_536), Int32(MSG_NOSIGNAL)) }
                if n <= 0 { return false }
                offset += n
            }
            if end { shutdown(fd, Int32(SHUT_WR)) }
            return true
        }
    }

    /// Reads to EOF (or an error), pausing `delay` after each read: the bytes, and errno if a read failed.
    func readAll(delay: Duration = .zero) async -> (bytes: [UInt8], error: Int32?) {
        let fd = fd
        return await Self.onThread {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = read(fd, &chunk, chunk.count)
                if n == 0 { return (received, nil) }
                if n < 0 { return (received, errno) }
                received += chunk[0..<n]
                if delay > .zero { usleep(UInt32(delay.components.attoseconds / 1_000_000_000_000)) }
            }
        }
    }
}
