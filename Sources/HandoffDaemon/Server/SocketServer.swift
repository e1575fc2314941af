#if canImport(Glibc)
import Glibc
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffProtocol
import Logging
import NIOCore
import NIOPosix

/// The Unix stream socket apps talk to: the I/O half of the `ClientGateway`.
///
/// Each connection gets its peer's uid from `SO_PEERCRED`, reads
/// newline-delimited requests (an over-long line costs its sender an error,
/// nothing more) into the gateway, and writes what the gateway queues in the
/// connection's outbox. The socket file gets the configured mode and group.
public final class SocketServer: Sendable {
    public struct Options: Sendable {
        public var path: String
        public var mode: mode_t = 0o660
        /// Group to own the socket; nil leaves it as created.
        public var group: String?
        public var maximumLineLength = ProtocolLimits.maximumLineLength

        public init(path: String) { self.path = path }
    }

    public let options: Options
    private let gateway: ClientGateway
    private let logger: Logger

    public init(options: Options, gateway: ClientGateway, logger: Logger) {
        self.options = options
        self.gateway = gateway
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

    private func bind() async throws -> NIOAsyncChannel<AcceptedConnection, Never> {
        let directory = SocketPath.directory(of: options.path)
        if !directory.isEmpty && !FileManager.default.fileExists(atPath: directory) {
            throw SocketServerError("the socket directory \(directory) does not exist")
        }
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 64)
            // A client that shuts down its write side still gets its answers (docs/protocol.md).
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .bind(unixDomainSocketPath: options.path, cleanupExistingSocketFile: true) { channel in
                AcceptedConnection.accept(channel) { try NIOAsyncChannel(wrappingChannelSynchronously: $0) }
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

    private func serve(_ accepted: AcceptedConnection) async {
        let connection = accepted.connection
        let credentials: PeerCredentials
        switch accepted.credentials {
        case .success(let read): credentials = read
        case .failure(let error):
            gateway.warnings.warn(logger, uid: nil, "dropped a connection whose credentials could not be read: \(error)")
            try? await connection.channel.close()
            return
        }
        let opened = await gateway.open(uid: credentials.uid, pid: credentials.pid)
        do {
            try await connection.executeThenClose { inbound, outbound in
                let client: ClientConnection
                switch opened {
                case .failure(let refusal):
                    try await outbound.write(ByteBuffer(bytes: refusal.bytes))
                    return
                case .success(let opened):
                    client = opened
                }
                client.onOverflow { connection.channel.close(promise: nil) }
                try await withThrowingTaskGroup(of: Side.self) { group in
                    // The writer drains the outbox; when the outbox closes, the connection ends.
                    group.addTask {
                        for await frame in client.outbox.frames {
                            try await outbound.write(ByteBuffer(bytes: frame))
                        }
                        return .writer
                    }
                    group.addTask {
                        try await self.read(inbound, into: client)
                        // End of file (a half-close too): every request read is answered, then the connection ends.
                        client.outbox.close()
                        return .reader
                    }
                    // The daemon closed the outbox (it stops, or the client does not read): stop reading too.
                    // The reader ending first leaves the writer to write out every answer.
                    if try await group.next() == .writer { group.cancelAll() } else { _ = try await group.next() }
                }
                await client.close()
            }
        } catch {
            logger.debug("connection ended: \(error)")
        }
        if case .success(let client) = opened { await client.close() }
    }
}

extension SocketServer {
    fileprivate enum Side: Sendable { case reader, writer }

    /// Feeds the connection's lines to the gateway, one at a time, each only when
    /// the outbox has room: a client that pipelines gets back-pressure, not a disconnect.
    fileprivate func read(_ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, into client: ClientConnection) async throws {
        var lines = LineBuffer(maximumLength: options.maximumLineLength)
        for try await chunk in inbound {
            for item in lines.append(chunk.readableBytesView) {
                await client.outbox.waitForRoom()
                if client.outbox.isClosed { return }
                switch item {
                case .tooLong: client.lineTooLong(limit: options.maximumLineLength)
                case .line(let bytes): await client.receive(bytes)
                }
            }
        }
    }
}

/// A socket setup failure, with the path and the fix in the message.
public struct SocketServerError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
