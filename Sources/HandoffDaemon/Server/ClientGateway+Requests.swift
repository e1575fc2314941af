#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffProtocol

/// Decoding requests, passing them to the daemon, and encoding the answers.
extension ClientGateway {
    /// Answers one request line. Every answer goes to the connection's outbox,
    /// in the order the requests came, with the events the daemon sends meanwhile.
    func handle(_ line: [UInt8], from connection: ClientConnection) async {
        let data = Data(line)
        var id: Int?
        do {
            let header = try WireFormat.requestHeader(data, id: &id)
            if header.method != .hello && connection.version == nil {
                throw ProtocolError(
                    .helloRequired,
                    "send hello first: {\"id\":1,\"method\":\"hello\",\"params\":{\"app\":\"…\",\"versions\":[1]}}")
            }
            try await dispatch(header.method, data, id: id, connection)
        } catch let error as ProtocolError {
            connection.respond(WireFormat.error(id: id, error))
        } catch {
            connection.respond(WireFormat.error(id: id, ProtocolError(.internal, String(describing: error))))
        }
    }

    private func dispatch(_ method: Method, _ line: Data, id: Int?, _ connection: ClientConnection) async throws {
        let caller = connection.caller
        func reply(_ result: some Encodable) throws { connection.respond(try WireFormat.result(id: id, result)) }
        func params<P: Decodable>(_ type: P.Type) throws -> P { try WireFormat.params(type, from: line) }
        switch method {
        case .hello:
            let hello = try params(HelloParams.self)
            guard let version = hello.versions.filter(ProtocolVersion.supported.contains).max() else {
                throw ProtocolError(
                    .unsupportedVersion,
                    "this handoffd speaks protocol versions \(ProtocolVersion.supported); the client offered \(hello.versions)")
            }
            try await daemon.hello(app: hello.app, handles: hello.handles ?? [], from: caller)
            connection.helloDone(version: version, app: hello.app)
            try reply(HelloResult(version: version, daemon: options.daemonName))
            await daemon.watchPairing(caller, hello.pairingEvents == true) { connection.setPairingEvents($0) }
        case .publish:
            try reply(try await daemon.publish(try params(PublishParams.self), from: caller))
        case .update:
            try await daemon.update(try params(UpdateParams.self), from: caller)
            try reply(EmptyResult())
        case .resign:
            try await daemon.resign(try params(ActivityIDParams.self).id, from: caller)
            try reply(EmptyResult())
        case .invalidate:
            try await daemon.invalidate(try params(ActivityIDParams.self).id, from: caller)
            try reply(EmptyResult())
        case .list:
            try reply(ListResult(activities: await daemon.nearbyActivities(for: caller)))
        case .subscribe:
            connection.subscribe(types: try params(SubscribeParams.self).types)
            try reply(EmptyResult())
        case .unsubscribe:
            connection.unsubscribe()
            try reply(EmptyResult())
        case .status:
            try reply(await daemon.status(for: caller))
        case .devices:
            try reply(await daemon.deviceList(for: caller))
        case .devicesRemove:
            try reply(try await daemon.removeDevice(try params(DevicesRemoveParams.self), for: caller))
        case .accountCreate:
            try reply(try await daemon.createAccount(try params(AccountNameParams.self).name, for: caller))
        case .accountList:
            try reply(AccountListResult(accounts: await daemon.accountList(for: caller)))
        case .accountExport:
            try reply(try await daemon.exportAccount(try params(AccountNameParams.self).name, for: caller))
        case .accountImport:
            try reply(try await daemon.importAccount(try params(AccountImportParams.self), for: caller))
        case .accountRemove:
            try await daemon.removeAccount(try params(AccountNameParams.self).name, for: caller)
            try reply(EmptyResult())
        case .continue:
            // The result is queued by the daemon, before the continuation's event can be.
            try await daemon.continueActivity(try params(ContinueParams.self), from: caller) { will in
                connection.respond(Self.frame(id: id, will))
            }
        case .continueCancel:
            try await daemon.cancelContinuation(try params(ContinuationParams.self).continuation, from: caller) {
                connection.respond(Self.frame(id: id, EmptyResult()))
            }
        case .pairOffer:
            // The result is queued by the daemon, before the pairing's events can be.
            try await daemon.offerPairing(try params(PairOfferParams.self), from: caller) { started in
                connection.respond(Self.frame(id: id, started))
            }
        case .pairJoin:
            try await daemon.joinPairing(try params(PairJoinParams.self), from: caller) { started in
                connection.respond(Self.frame(id: id, started))
            }
        case .pairConfirm:
            try await daemon.confirmPairing(try params(PairConfirmParams.self), from: caller)
            try reply(EmptyResult())
        case .pairCancel:
            try await daemon.cancelPairing(try params(PairingParams.self).pairing, from: caller)
            try reply(EmptyResult())
        }
    }

    /// A result frame; results of the protocol's own types always encode.
    private static func frame(id: Int?, _ result: some Encodable) -> Data {
        (try? WireFormat.result(id: id, result))
            ?? WireFormat.error(id: id, ProtocolError(.internal, "the result could not be encoded"))
    }
}
