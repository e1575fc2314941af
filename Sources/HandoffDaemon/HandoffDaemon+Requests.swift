import Foundation
import HandoffCore
import HandoffProtocol

/// The requests of docs/protocol.md, typed: the `ClientGateway` decodes them,
/// calls these, and encodes what they return or throw.
extension HandoffDaemon {
    /// Registers a new connection.
    func connect(_ caller: Caller) {
        clients.add(caller)
        logger.debug("\(caller) connected")
    }

    /// Forgets a closed connection, cancels its continuations and invalidates its activities.
    func disconnect(_ client: UInt64) async {
        guard clients.remove(client) != nil else { return }
        outgoing.cancelAll(of: client)
        await cancelPairing(of: client)
        let gone = activities.removeAll(of: client)
        logger.debug("client \(client) disconnected; \(gone.count) activities invalidated")
        if !gone.isEmpty { await updateAdvertisement() }
    }

    /// `hello`, after the gateway agreed on a version: the app's name and the types it handles.
    func hello(app: String, handles: [String], from caller: Caller) throws(ProtocolError) {
        let new = try clients.hello(caller.client, app: app, handles: handles)
        guard !new.isEmpty else { return }
        // Entries heard before a type was declared get its name now.
        for entry in nearby.declare(clients.declared, accounts: Array(accounts.keys.values)) { tell(.updated, entry) }
    }

    func publish(_ params: PublishParams, from caller: Caller) async throws(ProtocolError) -> PublishResult {
        guard accounts.visible(to: caller.uid).first != nil else {
            throw ProtocolError(.noAccount, "uid \(caller.uid) has no handoff account; create one with: handoffctl pair")
        }
        let activity = try activities.publish(params, client: caller.client, uid: caller.uid, now: .now)
        logger.debug("\(caller) published \(activity.type) as \(activity.id)")
        await updateAdvertisement()
        return PublishResult(id: activity.id)
    }

    func update(_ params: UpdateParams, from caller: Caller) async throws(ProtocolError) {
        _ = try activities.update(params, client: caller.client, now: .now)
        await updateAdvertisement()
    }

    func resign(_ id: String, from caller: Caller) async throws(ProtocolError) {
        try activities.resign(id, client: caller.client)
        await updateAdvertisement()
    }

    func invalidate(_ id: String, from caller: Caller) async throws(ProtocolError) {
        try activities.invalidate(id, client: caller.client)
        await updateAdvertisement()
    }

    /// The nearby activities `caller`'s user may see.
    func nearbyActivities(for caller: Caller) -> [NearbyActivity] {
        nearby.registry.all.filter { accounts.mayUse($0.accountName, uid: caller.uid) }.map(\.wire)
    }

    func status(for caller: Caller) async -> StatusResult {
        let radioStatus = await radio.status
        let current = activities.current(at: .now)
        return StatusResult(
            daemon: settings.daemonName, adapter: radioStatus.adapter, adapterAddress: radioStatus.adapterAddress,
            radio: radioStatus.phase.description, scanning: radioStatus.scanning, advertising: radioStatus.advertising,
            lastError: radioStatus.lastError, accounts: accounts.visible(to: caller.uid).map(\.name),
            nearbyCount: nearbyActivities(for: caller).count, clientCount: clients.count,
            localActivityCount: activities.count,
            currentActivityType: current.flatMap { $0.uid == caller.uid || caller.uid == 0 ? $0.type.rawValue : nil },
            epochSeconds: settings.epochSeconds, beaconsRecognized: nearby.recognized, beaconsRejected: nearby.rejected,
            beaconCopiesRefused: nearby.copies, continuation: advertiser.policy.availability)
    }

    // MARK: Accounts

    func createAccount(_ name: String, for caller: Caller) throws(ProtocolError) -> AccountInfo {
        let key = try accounts.create(name: name, owner: caller.uid)
        logger.notice("account \(key.name) (\(key.id)) created for uid \(caller.uid)")
        accountsChanged()
        return AccountInfo(name: key.name, fingerprint: key.id.description, owner: caller.uid)
    }

    func accountList(for caller: Caller) -> [AccountInfo] { accounts.info(for: caller.uid) }

    func exportAccount(_ name: String, for caller: Caller) throws(ProtocolError) -> AccountExportResult {
        let code = try accounts.exportCode(name, uid: caller.uid)
        logger.notice("account \(name) exported to uid \(caller.uid)")
        return AccountExportResult(name: name, code: code)
    }

    func importAccount(_ params: AccountImportParams, for caller: Caller) async throws(ProtocolError) -> AccountInfo {
        let name = params.name ?? Self.loginName(of: caller.uid)
        let key = try accounts.importCode(params.code, name: name, owner: caller.uid)
        logger.notice("account \(key.name) (\(key.id)) imported for uid \(caller.uid)")
        accountsChanged()
        await updateAdvertisement()
        return AccountInfo(name: key.name, fingerprint: key.id.description, owner: caller.uid)
    }

    func removeAccount(_ name: String, for caller: Caller) async throws(ProtocolError) {
        try accounts.remove(name, uid: caller.uid)
        logger.notice("account \(name) removed by uid \(caller.uid)")
        accountsChanged()
        await updateAdvertisement()
    }

    /// The login name of `uid`, for naming an imported account; "default" if unknown.
    static func loginName(of uid: UInt32) -> String {
        guard let entry = getpwuid(uid), let name = entry.pointee.pw_name else { return "default" }
        let text = String(cString: name)
        return (try? AccountKey.validate(name: text)) != nil ? text : "default"
    }
}
