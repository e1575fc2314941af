#if canImport(Glibc)
import Glibc
#endif
import NIOCore

/// Who is on the other end of a Unix socket, from `SO_PEERCRED`.
struct PeerCredentials: Sendable, Equatable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32

    /// Reads the peer's credentials of an accepted connection; on the channel's event loop (as in a child
    /// channel initializer) the future is complete on return.
    static func future(of channel: any Channel) -> EventLoopFuture<PeerCredentials> {
        guard let provider = channel as? any SocketOptionProvider else {
            return channel.eventLoop.makeFailedFuture(ChannelError.operationUnsupported)
        }
        return read(provider)
    }

    // Kept non-public and non-inlinable, as SwiftNIO advises for libc-typed options.
    private static func read(_ provider: any SocketOptionProvider) -> EventLoopFuture<PeerCredentials> {
        provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(SO_PEERCRED))
            .map { (credentials: LinuxUcred) in
                PeerCredentials(pid: credentials.pid, uid: credentials.uid, gid: credentials.gid)
            }
    }
}

/// Linux's `struct ucred` (pid_t, uid_t, gid_t), which Glibc's module map
/// leaves out because it sits behind _GNU_SOURCE.
private struct LinuxUcred: Sendable {
    var pid: Int32
    var uid: UInt32
    var gid: UInt32
}
