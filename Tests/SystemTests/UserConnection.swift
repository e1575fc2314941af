#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation

/// A connection to handoffd made by a child process running as another uid.
///
/// `SO_PEERCRED` records the credentials of the process that called
/// `connect(2)`, so the child (`setpriv --reuid UID --regid UID`, a real
/// second user, not a faked credential) connects and hands the connected
/// socket back over a socketpair (`SCM_RIGHTS`); the daemon sees that uid for
/// the whole connection. The test needs to be root, as `setpriv` does.
enum UserConnection {
    static let script = """
        import socket, sys
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sys.argv[1])
        socket.send_fds(socket.socket(fileno=3), [b"x"], [s.fileno()])
        """

    /// Whether this test run may switch uids.
    static var available: Bool { getuid() == 0 && access("/usr/bin/setpriv", X_OK) == 0 }

    /// A client of `socket` as `uid` that has said hello.
    static func client(socket path: String, uid: UInt32, handles: [String] = []) async throws -> WireClient {
        var pair: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0, &pair) == 0 else {
            throw TestFailure("socketpair failed")
        }
        defer { close(pair[0]) }
        let child = try TestProcess(
            "/usr/bin/setpriv",
            ["--reuid=\(uid)", "--regid=\(uid)", "--clear-groups", "/usr/bin/python3", "-c", script, path],
            extraDescriptors: [(pair[1], 3)])
        close(pair[1])
        let status = await child.exitCode(within: .seconds(20))
        guard status == 0 else { throw TestFailure("the uid \(uid) child could not connect (status \(String(describing: status)))") }
        let client = WireClient(connected: try receiveDescriptor(on: pair[0]))
        try await client.hello(handles: handles)
        return client
    }

    /// One descriptor sent with `SCM_RIGHTS`.
    private static func receiveDescriptor(on socket: Int32) throws -> Int32 {
        var byte: UInt8 = 0
        // struct cmsghdr (len: size_t, level: int, type: int), then the int, padded.
        let headerSize = MemoryLayout<Int>.size + 2 * MemoryLayout<Int32>.size
        var control = [UInt8](repeating: 0, count: headerSize + 8)
        let received = withUnsafeMutablePointer(to: &byte) { bytePointer in
            control.withUnsafeMutableBytes { controlBuffer in
                var vector = iovec(iov_base: bytePointer, iov_len: 1)
                return withUnsafeMutablePointer(to: &vector) { vectorPointer in
                    var message = msghdr()
                    message.msg_iov = vectorPointer
                    message.msg_iovlen = 1
                    message.msg_control = controlBuffer.baseAddress
                    message.msg_controllen = controlBuffer.count
                    return recvmsg(socket, &message, 0)
                }
            }
        }
        guard received == 1 else { throw TestFailure("no descriptor from the child") }
        let level = control.withUnsafeBytes { $0.load(fromByteOffset: MemoryLayout<Int>.size, as: Int32.self) }
        let type = control.withUnsafeBytes { $0.load(fromByteOffset: MemoryLayout<Int>.size + 4, as: Int32.self) }
        guard level == SOL_SOCKET, type == SCM_RIGHTS else { throw TestFailure("the child sent no descriptor") }
        return control.withUnsafeBytes { $0.load(fromByteOffset: headerSize, as: Int32.self) }
    }
}
