#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport

/// A connected `AF_UNIX` `SOCK_STREAM` descriptor for the tests' raw clients (`WireClient`, `StreamAppEnd`).
enum UnixStreamSocket {
    /// Connects to `path`; the caller owns the descriptor.
    static func connect(to path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw TestFailure("socket() failed") }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: Array(path.utf8.prefix(raw.count - 1)) + [0])
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let error = errno
            Glibc.close(fd)
            throw TestFailure("connect(\(path)): \(String(cString: strerror(error)))")
        }
        return fd
    }
}
