#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HandoffProtocol
import Logging
import NIOCore
import NIOPosix

/// The Unix stream socket apps talk to.
///
/// Each connection gets its peer's uid from `SO_PEERCRED`, reads
/// newline-delimited requests (an over-long line costs its sender an error,
/// nothing more), and writes responses and events from an ordered, bounded
/// outbox. The socket file gets the configured mode and group.
public final class SocketServer: Sendable {
    public struct Options: Sendable {
        public var path: String
        public var mode: mode_t = 0o660
        /// Group to own the socket; nil leaves it as created.
        public var group: String?
        public var maximumLineLength = ProtocolLimits.maximumLineLength
        public var outboxCapacity = 1024

        public init(path: String) { self.path = path }
    }

    public let options: Options
    private let daemon: HandoffDaemon
    private let logger: Logger

    public init(options: Options, daemon: HandoffDaemon, logger: Logger) {
        self.options = options
        self.daemon = daemon
        self.logger = logger
    }

    /// Binds the socket and serves until the task is cancelled; removes the socket file on the way out.
    ///
    /// - Parameter listening: called once, after the socket is bound and has its mode and group, and
    ///   before the first connection is accepted. handoffd tells systemd it is ready from here, so
    ///   `systemctl start handoffd` returns only when clients can connect.
    public func run(listening: @Sendable () async -> Void = {}) async throws {
        let server = try await bind()
        defer { unlink(options.path) }
        await listening()
        try await withThrowingDiscardingTaskGroup { group in
            try await withTaskCancellationHandler {
                try await server.executeThenClose { connections in
                    for try await connection in connections {
                        group.addTask { await self.serve(connection) }
                    }
                }
            } onCancel: {
                server.channel.close(promise: nil)
            }
            group.cancelAll()
        }
    }

    private func bind() async throws -> NIOAsyncChannel<NIOAsyncChannel<ByteBuffer, ByteBuffer>, Never> {
        let directory = (options.path as NSString).deletingLastPathComponent
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
            throw SocketServerError("the socket directory \(directory) does not exist")
        }
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            .bind(unixDomainSocketPath: options.path, cleanupExistingSocketFile: true) { channel in
                channel.eventLoop.makeCompletedFuture {
                    try NIOAsyncChannel<ByteBuffer, ByteBuffer>(wrappingChannelSynchronously: channel)
                }
            }
        guard chmod(options.path, options.mode) == 0 else {
            throw SocketServerError("cannot set mode \(String(options.mode, radix: 8)) on \(options.path): \(String(cString: strerror(errno)))")
        }
        if let group = options.group, !group.isEmpty {
            guard let entry = getgrnam(group) else {
                throw SocketServerError("group \"\(group)\" does not exist (set [socket] group in the config, or create it)")
            }
            guard chown(options.path, uid_t.max, entry.pointee.gr_gid) == 0 else {
                throw SocketServerError("cannot give \(options.path) to group \(group): \(String(cString: strerror(errno)))")
            }
        }
        logger.info("listening on \(options.path) (mode \(String(options.mode, radix: 8)))")
        return server
    }

    private func serve(_ connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>) async {
        let credentials: PeerCredentials
        do { credentials = try await PeerCredentials.of(connection.channel) } catch {
            logger.warning("dropped a connection whose credentials could not be read: \(error)")
            try? await connection.channel.close()
            return
        }
        let outbox = Outbox(capacity: options.outboxCapacity)
        let registration = await daemon.addClient(uid: credentials.uid, pid: credentials.pid, outbox: outbox)
        do {
            try await connection.executeThenClose { inbound, outbound in
                let clientID: UInt64
                switch registration {
                case .failure(let error):
                    try await outbound.write(ByteBuffer(bytes: WireFormat.error(id: nil, error)))
                    return
                case .success(let id):
                    clientID = id
                }
                try await withThrowingTaskGroup(of: Void.self) { group in
                    // The writer drains the outbox; when the outbox closes, the connection ends.
                    group.addTask {
                        for await frame in outbox.frames {
                            try await outbound.write(ByteBuffer(bytes: frame))
                        }
                    }
                    group.addTask {
                        var lines = LineBuffer(maximumLength: self.options.maximumLineLength)
                        for try await chunk in inbound {
                            for item in lines.append(chunk.readableBytesView) {
                                switch item {
                                case .tooLong:
                                    outbox.send(
                                        WireFormat.error(
                                            id: nil,
                                            ProtocolError(
                                                .lineTooLong,
                                                "request line longer than \(self.options.maximumLineLength) bytes; it was skipped")))
                                case .line(let bytes):
                                    let response = await self.daemon.handle(line: bytes, from: clientID)
                                    // Empty: the daemon queued the response itself (before its events).
                                    if !response.isEmpty && !outbox.send(response) { outbox.close() }
                                }
                            }
                        }
                        outbox.close()
                    }
                    try await group.next()
                    group.cancelAll()
                }
                await daemon.removeClient(clientID)
            }
        } catch {
            logger.debug("connection ended: \(error)")
        }
        if case .success(let id) = registration { await daemon.removeClient(id) }
    }
}

/// A socket setup failure, with the path and the fix in the message.
public struct SocketServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
