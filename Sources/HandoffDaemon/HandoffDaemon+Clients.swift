import Foundation
import HandoffCore
import HandoffProtocol

extension HandoffDaemon {
    /// Registers a new connection.
    /// - Returns: the client's id, or `too-many-clients`.
    func addClient(uid: UInt32, pid: Int32, outbox: Outbox) -> Result<UInt64, ProtocolError> {
        guard clients.count < settings.maxClients else {
            logger.warning("refused a connection from uid \(uid): already \(settings.maxClients) clients")
            return .failure(
                ProtocolError(.tooManyClients, "handoffd already serves \(settings.maxClients) clients; try again later"))
        }
        nextClient += 1
        clients[nextClient] = ClientSession(id: nextClient, uid: uid, pid: pid, outbox: outbox)
        logger.debug("client \(nextClient) connected (uid \(uid), pid \(pid))")
        return .success(nextClient)
    }

    /// Forgets a closed connection and invalidates its activities.
    func removeClient(_ id: UInt64) async {
        guard let client = clients.removeValue(forKey: id) else { return }
        client.outbox.close()
        cancelContinuations(of: id)
        let gone = activities.removeAll(of: id)
        logger.debug("\(client.description) disconnected; \(gone.count) activities invalidated")
        if !gone.isEmpty { await refreshAdvertisement() }
    }

    /// Answers one request line with one response frame.
    func handle(line: [UInt8], from clientID: UInt64) async -> Data {
        let data = Data(line)
        var id: Int?
        do {
            let header = try WireFormat.requestHeader(data, id: &id)
            guard let client = clients[clientID] else {
                throw ProtocolError(.internal, "unknown connection")
            }
            if header.method != .hello && client.version == nil {
                throw ProtocolError(.helloRequired, "send hello first: {\"id\":1,\"method\":\"hello\",\"params\":{\"app\":\"…\",\"versions\":[1]}}")
            }
            return try await dispatch(header.method, data, id: id, client: client)
        } catch let error as ProtocolError {
            return WireFormat.error(id: id, error)
        } catch {
            return WireFormat.error(id: id, ProtocolError(.internal, String(describing: error)))
        }
    }

    private func dispatch(_ method: Method, _ line: Data, id: Int?, client: ClientSession) async throws -> Data {
        switch method {
        case .hello:
            return try WireFormat.result(id: id, hello(try WireFormat.params(HelloParams.self, from: line), client))
        case .publish:
            return try WireFormat.result(id: id, await publish(try WireFormat.params(PublishParams.self, from: line), client))
        case .update:
            let params = try WireFormat.params(UpdateParams.self, from: line)
            _ = try activities.update(params, client: client.id, now: .now)
            await refreshAdvertisement()
            return try WireFormat.result(id: id, EmptyResult())
        case .resign:
            try activities.resign(try WireFormat.params(ActivityIDParams.self, from: line).id, client: client.id)
            await refreshAdvertisement()
            return try WireFormat.result(id: id, EmptyResult())
        case .invalidate:
            try activities.invalidate(try WireFormat.params(ActivityIDParams.self, from: line).id, client: client.id)
            await refreshAdvertisement()
            return try WireFormat.result(id: id, EmptyResult())
        case .list:
            let visible = nearby.all.filter { accounts.mayUse($0.accountName, uid: client.uid) }
            return try WireFormat.result(id: id, ListResult(activities: visible.map(\.wire)))
        case .subscribe:
            let params = try WireFormat.params(SubscribeParams.self, from: line)
            clients[client.id]?.subscribed = true
            clients[client.id]?.subscribedTypes = params.types.map(Set.init)
            return try WireFormat.result(id: id, EmptyResult())
        case .unsubscribe:
            clients[client.id]?.subscribed = false
            return try WireFormat.result(id: id, EmptyResult())
        case .status:
            return try WireFormat.result(id: id, await status(for: client))
        case .accountCreate:
            let name = try WireFormat.params(AccountNameParams.self, from: line).name
            let key = try accounts.create(name: name, owner: client.uid)
            logger.notice("account \(key.name) (\(key.id)) created for uid \(client.uid)")
            accountsChanged()
            return try WireFormat.result(id: id, AccountInfo(name: key.name, fingerprint: key.id.description, owner: client.uid))
        case .accountList:
            return try WireFormat.result(id: id, AccountListResult(accounts: accounts.info(for: client.uid)))
        case .accountExport:
            let name = try WireFormat.params(AccountNameParams.self, from: line).name
            let code = try accounts.exportCode(name, uid: client.uid)
            logger.notice("account \(name) exported to uid \(client.uid)")
            return try WireFormat.result(id: id, AccountExportResult(name: name, code: code))
        case .accountImport:
            let params = try WireFormat.params(AccountImportParams.self, from: line)
            let name = params.name ?? Self.loginName(of: client.uid)
            let key = try accounts.importCode(params.code, name: name, owner: client.uid)
            logger.notice("account \(key.name) (\(key.id)) imported for uid \(client.uid)")
            accountsChanged()
            await refreshAdvertisement()
            return try WireFormat.result(id: id, AccountInfo(name: key.name, fingerprint: key.id.description, owner: client.uid))
        case .accountRemove:
            let name = try WireFormat.params(AccountNameParams.self, from: line).name
            try accounts.remove(name, uid: client.uid)
            logger.notice("account \(name) removed by uid \(client.uid)")
            accountsChanged()
            await refreshAdvertisement()
            return try WireFormat.result(id: id, EmptyResult())
        case .continue:
            return try startContinuation(try WireFormat.params(ContinueParams.self, from: line), id: id, client: client)
        case .continueCancel:
            return try cancelContinuation(try WireFormat.params(ContinuationParams.self, from: line), id: id, client: client)
        }
    }

    private func hello(_ params: HelloParams, _ client: ClientSession) throws(ProtocolError) -> HelloResult {
        guard let version = params.versions.filter(ProtocolVersion.supported.contains).max() else {
            throw ProtocolError(
                .unsupportedVersion,
                "this handoffd speaks protocol versions \(ProtocolVersion.supported); the client offered \(params.versions)")
        }
        var handles = Set<ActivityType>()
        for text in params.handles ?? [] {
            do { handles.insert(try ActivityType(text)) } catch {
                throw ProtocolError(.invalidParams, "handles: \"\(text)\": \(error)")
            }
        }
        guard declared.union(handles).count <= Self.maximumDeclaredTypes else {
            throw ProtocolError(.invalidParams, "handles: more than \(Self.maximumDeclaredTypes) activity types declared on this machine")
        }
        clients[client.id]?.app = String(params.app.prefix(64))
        clients[client.id]?.version = version
        clients[client.id]?.handles = handles
        declare(handles)
        return HelloResult(version: version, daemon: settings.daemonName)
    }

    private func publish(_ params: PublishParams, _ client: ClientSession) async throws -> PublishResult {
        guard accounts.visible(to: client.uid).first != nil else {
            throw ProtocolError(
                .noAccount,
                "uid \(client.uid) has no handoff account; create one with: handoffctl pair")
        }
        let activity = try activities.publish(params, client: client.id, uid: client.uid, now: .now)
        logger.debug("\(client.description) published \(activity.type) as \(activity.id)")
        await refreshAdvertisement()
        return PublishResult(id: activity.id)
    }

    private func status(for client: ClientSession) async -> StatusResult {
        let radioStatus = await radio.status
        let current = activities.current(at: .now)
        return StatusResult(
            daemon: settings.daemonName, adapter: radioStatus.adapter, adapterAddress: radioStatus.adapterAddress,
            radio: radioStatus.phase.description, scanning: radioStatus.scanning, advertising: radioStatus.advertising,
            lastError: radioStatus.lastError, accounts: accounts.visible(to: client.uid).map(\.name),
            nearbyCount: nearby.all.filter { accounts.mayUse($0.accountName, uid: client.uid) }.count,
            clientCount: clients.count, localActivityCount: activities.count,
            currentActivityType: current.flatMap { $0.uid == client.uid || client.uid == 0 ? $0.type.rawValue : nil },
            epochSeconds: settings.epochSeconds, beaconsRecognized: recognized, beaconsRejected: rejected,
            continuation: await privacy?.availability)
    }

    /// The login name of `uid`, for naming an imported account; "default" if unknown.
    static func loginName(of uid: UInt32) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "default" }
        let text = String(cString: name)
        return (try? AccountKey.validate(name: text)) != nil ? text : "default"
    }
}
