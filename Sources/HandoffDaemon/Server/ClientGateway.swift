#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol
import Logging
import Synchronization

/// Where clients meet the daemon: it owns the wire format (docs/protocol.md),
/// the connections with their outboxes, the `hello` gate and the subscription
/// filters. Requests are decoded here and passed to the daemon's typed
/// methods; what they return or throw is encoded here, and so are the
/// daemon's events.
///
/// It does no I/O: `SocketServer` feeds it lines from the Unix socket and
/// drains the outboxes, and tests can feed it directly.
public final class ClientGateway: ClientEvents, Sendable {
    public struct Options: Sendable {
        /// Connections served at once; more are refused with `too-many-clients`.
        public var maximumClients = 64
        /// Frames queued for one connection; a client that lets more pile up is disconnected.
        public var outboxCapacity = 1024
        /// Shown in `hello`.
        public var daemonName = "handoffd \(HandoffDaemon.version)"

        public init() {}
    }

    let daemon: HandoffDaemon
    let options: Options
    let logger: Logger
    /// Refusals and disconnections are logged at most a few times a minute per uid.
    let warnings = WarningLimiter()
    private let connections = Mutex<(next: UInt64, open: [UInt64: ClientConnection])>((0, [:]))

    /// A gateway for `daemon`, which sends its events through it from now on.
    public init(daemon: HandoffDaemon, options: Options, logger: Logger) async {
        self.daemon = daemon
        self.options = options
        self.logger = logger
        await daemon.attach(self)
    }

    /// A new connection from a peer with these credentials.
    /// - Returns: the connection, or the `too-many-clients` frame to send before closing.
    public func open(uid: UInt32, pid: Int32) async -> Result<ClientConnection, ProtocolFrame> {
        let outbox = Outbox(capacity: options.outboxCapacity)
        let opened = connections.withLock { state -> ClientConnection? in
            guard state.open.count < options.maximumClients else { return nil }
            state.next += 1
            let connection = ClientConnection(
                caller: Caller(client: state.next, uid: uid, pid: pid), outbox: outbox, gateway: self)
            state.open[state.next] = connection
            return connection
        }
        guard let opened else {
            warnings.warn(logger, uid: uid, "refused a connection from uid \(uid): already \(options.maximumClients) clients")
            return .failure(
                ProtocolFrame(
                    WireFormat.error(
                        id: nil,
                        ProtocolError(
                            .tooManyClients, "handoffd already serves \(options.maximumClients) clients; try again later"))))
        }
        await daemon.connect(opened.caller)
        return .success(opened)
    }

    func close(_ connection: ClientConnection) async {
        let removed = connections.withLock { $0.open.removeValue(forKey: connection.caller.client) }
        connection.outbox.close()
        guard removed != nil else { return }
        await daemon.disconnect(connection.caller.client)
    }

    /// A connection whose client let `outboxCapacity` frames pile up: it is
    /// forgotten now (its activities invalidated, its continuations cancelled),
    /// and the socket ends once the queued frames are written or dropped.
    func overflowed(_ connection: ClientConnection) {
        let removed = connections.withLock { $0.open.removeValue(forKey: connection.caller.client) }
        guard removed != nil else { return }
        connection.outbox.close()
        warnings.warn(logger, uid: connection.caller.uid, "\(connection.description) is not reading; disconnecting it")
        let daemon = daemon
        Task { await daemon.disconnect(connection.caller.client) }
    }

    /// Goodbye: every connection ends once its outbox is written out.
    public func closeAll() {
        for connection in connections.withLock({ Array($0.open.values) }) { connection.outbox.close() }
    }

    // MARK: Events (ClientEvents)

    func nearby(_ name: EventName, _ activity: NearbyActivity, audience: [UInt64]) {
        let recipients = connections(audience).filter { $0.wants(type: activity.type) }
        // Encoded once for all of them, and not at all for nobody.
        guard !recipients.isEmpty, let frame = try? WireFormat.event(name, NearbyEvent(activity: activity)) else { return }
        for connection in recipients { deliver(frame, to: connection) }
    }

    func send(_ name: EventName, _ data: some Encodable & Sendable, to client: UInt64) {
        guard let frame = try? WireFormat.event(name, data), let connection = connections([client]).first else { return }
        deliver(frame, to: connection)
    }

    func pairing(_ name: EventName, _ data: some Encodable & Sendable, uid: UInt32, starter: UInt64?) {
        guard let frame = try? WireFormat.event(name, data) else { return }
        let audience = connections.withLock { state in
            state.open.values.filter { $0.caller.client == starter || ($0.caller.uid == uid && $0.wantsPairingEvents) }
        }
        for connection in audience.sorted(by: { $0.caller.client < $1.caller.client }) { deliver(frame, to: connection) }
    }

    private func connections(_ ids: [UInt64]) -> [ClientConnection] {
        connections.withLock { state in ids.compactMap { state.open[$0] } }
    }

    private func deliver(_ frame: Data, to connection: ClientConnection) {
        connection.deliver(frame)
    }
}

/// A frame ready to send (one JSON line), for the refusals the gateway makes itself.
public struct ProtocolFrame: Error, Sendable {
    public let bytes: Data
    init(_ bytes: Data) { self.bytes = bytes }
}
