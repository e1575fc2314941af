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
        fd = try UnixStreamSocket.connect(to: path)
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
