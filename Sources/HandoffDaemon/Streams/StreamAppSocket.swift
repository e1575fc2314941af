#if canImport(Glibc)
import Glibc
#endif
import NIOCore
import NIOPosix

/// Where an app picks up its end of a continuation stream (docs/protocol.md, "Continuation streams";
/// docs/continuation.md, section 10.6): a listening `AF_UNIX` `SOCK_STREAM` socket at a fresh path whose name
/// has 128 random bits, in a directory of the daemon's. The first connection whose `SO_PEERCRED` uid is the
/// app's becomes the stream's app channel (`StreamAppChannel`'s configuration: half-closure both ways); a
/// connection of any other uid is closed at once, without a byte. The socket file is removed as soon as the
/// app's connection came, when the wait ends, and on `close()`.
final class StreamAppSocket: Sendable {
    /// The socket's path, for the app (in `continued` or `streamOpened`).
    let path: String
    private let server: NIOAsyncChannel<AcceptedConnection, Never>

    private init(path: String, server: NIOAsyncChannel<AcceptedConnection, Never>) {
        self.path = path
        self.server = server
    }

    /// Listens at a fresh path in `directory` (which must exist, and hold at most 107-byte paths).
    static func listen(in directory: String, group: any EventLoopGroup) async throws -> StreamAppSocket {
        var generator = SystemRandomNumberGenerator()
        let name = (0..<2).map { _ in
            let digits = String(generator.next() as UInt64, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
        let path = directory + "/" + name + ".stream"
        let server = try await ServerBootstrap(group: group)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(unixDomainSocketPath: path, cleanupExistingSocketFile: false) { channel in
                // The credentials at accept: an app that writes its part and closes at once is still its app.
                AcceptedConnection.accept(channel) {
                    try NIOAsyncChannel(
                        wrappingChannelSynchronously: $0,
                        configuration: .init(
                            backPressureStrategy: .init(lowWatermark: 1, highWatermark: StreamAppChannel.bufferedReads),
                            isOutboundHalfClosureEnabled: true))
                }
            }
        // Who may connect is decided by SO_PEERCRED below, not by the file's mode (apps of the handoff
        // group have other uids than the daemon).
        _ = chmod(path, 0o666)
        return StreamAppSocket(path: path, server: server)
    }

    /// The connection of the app of `uid`, or nil when none came within `timeout` (or after `close()`).
    /// Ends the listening either way.
    func accept(uid: UInt32, timeout: Duration) async -> NIOAsyncChannel<ByteBuffer, ByteBuffer>? {
        let server = server
        let timer = Task {
            try await Task.sleep(for: timeout)
            server.channel.close(promise: nil)
        }
        defer {
            timer.cancel()
            close()
        }
        do {
            return try await server.executeThenClose { connections in
                for try await accepted in connections {
                    if case .success(let peer) = accepted.credentials, peer.uid == uid {
                        return accepted.connection
                    }
                    try? await accepted.connection.channel.close()
                }
                return nil
            }
        } catch {
            return nil
        }
    }

    /// Stops listening and removes the socket file.
    func close() {
        server.channel.close(promise: nil)
        _ = unlink(path)
    }
}
