#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffProtocol
import Synchronization

/// One connection as the gateway sees it: who is on the other end, its
/// ordered outbox, and the protocol state of docs/protocol.md (the version
/// agreed in `hello`, and what it subscribed to).
public final class ClientConnection: Sendable {
    public let caller: Caller
    /// Frames to the client, in order; the socket drains it.
    public let outbox: Outbox
    private let gateway: ClientGateway
    private let state = Mutex(State())

    private struct State {
        var app: String?
        var version: Int?
        var subscribed = false
        /// nil: every type.
        var types: Set<String>?
        /// `hello` asked for the pairing events of every attempt of this uid.
        var pairingEvents = false
        /// What the socket does when the client stopped reading (closes it).
        var onOverflow: (@Sendable () -> Void)?
    }

    init(caller: Caller, outbox: Outbox, gateway: ClientGateway) {
        self.caller = caller
        self.outbox = outbox
        self.gateway = gateway
    }

    /// Answers one request line; every answer and event goes to the outbox.
    /// Nothing is run once the connection is closing (its client stopped reading, or it closed).
    public func receive(_ line: [UInt8]) async {
        guard !outbox.isClosed else { return }
        await gateway.handle(line, from: self)
    }

    /// Tells the client that a line was longer than `limit` and was skipped.
    public func lineTooLong(limit: Int) {
        respond(
            WireFormat.error(
                id: nil, ProtocolError(.lineTooLong, "request line longer than \(limit) bytes; it was skipped")))
    }

    /// Called once if the client lets the outbox fill up; the socket closes itself here,
    /// dropping what was still queued.
    public func onOverflow(_ action: @escaping @Sendable () -> Void) {
        state.withLock { $0.onOverflow = action }
    }

    /// The connection is gone: forget it and invalidate its activities.
    public func close() async {
        await gateway.close(self)
    }

    public var description: String {
        "client \(caller.client) (\(state.withLock { $0.app } ?? "no hello yet"), uid \(caller.uid), pid \(caller.pid))"
    }

    // MARK: Protocol state

    var version: Int? { state.withLock { $0.version } }

    func helloDone(version: Int, app: String) {
        state.withLock {
            $0.version = version
            $0.app = String(app.prefix(64))
        }
    }

    func subscribe(types: [String]?) {
        state.withLock {
            $0.subscribed = true
            $0.types = types.map(Set.init)
        }
    }

    func unsubscribe() { state.withLock { $0.subscribed = false } }

    func setPairingEvents(_ wanted: Bool) { state.withLock { $0.pairingEvents = wanted } }

    /// Whether this connection hears the pairing events of its uid's attempts (docs/protocol.md).
    var wantsPairingEvents: Bool { state.withLock { $0.pairingEvents } }

    /// Whether a nearby event about an activity of `type` goes to this client.
    func wants(type: String?) -> Bool {
        state.withLock { $0.subscribed && ($0.types.map { $0.contains(type ?? "") } ?? true) }
    }

    // MARK: Output

    /// Queues a response; a client that let its outbox fill up is disconnected.
    func respond(_ frame: Data) { deliver(frame) }

    /// Queues a frame; false when the outbox was full or closed. A full outbox
    /// means the client does not read: the connection ends, as if it had closed.
    @discardableResult
    func deliver(_ frame: Data) -> Bool {
        guard outbox.send(frame) else {
            if outbox.overflowed {
                gateway.overflowed(self)
                state.withLock { state in
                    defer { state.onOverflow = nil }
                    return state.onOverflow
                }?()
            }
            return false
        }
        return true
    }
}
