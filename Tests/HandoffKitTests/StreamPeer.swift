import Foundation
import HandoffTestSupport

#if canImport(Glibc)
import Glibc
#endif

/// The other end of a continuation stream's app socket, as handoffd's `StreamAppSocket` gives it: a plain
/// POSIX Unix `SOCK_STREAM` socket with blocking calls, each run on a thread of its own so that no
/// Swift concurrency thread blocks.
final class StreamPeer: Sendable {
    let path: String
    private let listener: Int32

    init() throws {
        path = FakeDaemon.temporarySocketPath()
        listener = try UnixSocket.listen(at: path)
    }

    deinit {
        Glibc.close(listener)
        unlink(path)
    }

    /// The next connection's descriptor, within 10 s; its reads give up after 20 s (so that a failing
    /// test fails instead of hanging on a blocked thread).
    func accept() async throws -> Int32 {
        let listener = listener
        return try await Self.onThread {
            var waiting = pollfd(fd: listener, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 10_000) == 1 else { throw POSIXError(.ETIMEDOUT) }
            let fd = Glibc.accept(listener, nil, nil)
            guard fd >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
            var timeout = timeval(tv_sec: 20, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            return fd
        }
    }

    /// Writes all of `bytes`, in pieces of at most 64 KiB.
    static func write(_ fd: Int32, _ bytes: [UInt8]) async throws {
        try await onThread {
            var start = 0
            while start < bytes.count {
                let count = bytes[start...].prefix(65536).withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard count > 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
                start += count
            }
        }
    }

    /// Reads until EOF.
    static func readToEnd(_ fd: Int32) async throws -> [UInt8] {
        try await onThread {
            var all: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
                guard count >= 0 else { throw POSIXError(.init(rawValue: errno) ?? .EIO) }
                if count == 0 { return all }
                all += buffer[0..<count]
            }
        }
    }

    static func shutdownOutput(_ fd: Int32) { _ = Glibc.shutdown(fd, Int32(SHUT_WR)) }
    static func close(_ fd: Int32) { _ = Glibc.close(fd) }

    /// `count` bytes of a pattern that shows a dropped, repeated or moved byte.
    static func pattern(_ count: Int, seed: UInt8 = 0) -> [UInt8] {
        (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ Int(seed)) }
    }

    private static func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            Thread.detachNewThread { continuation.resume(with: Result { try body() }) }
        }
    }
}
