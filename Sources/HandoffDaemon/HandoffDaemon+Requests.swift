import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
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
        guard let gone = clients.remove(client) else { return }
        outgoing.cancelAll(of: client)
        // Its offers are withdrawn and its streams end (on the origin), as do those it asked for.
        streams.cancelAll(of: client)
        await cancelPairing(of: client)
        // Its declared types go with it; entries already named keep their names.
        if !gone.handles.isEmpty { _ = nearby.declare(clients.declared, accounts: Array(accounts.keys.values)) }
        let invalidated = activities.removeAll(of: client)
        logger.debug("client \(client) disconnected; \(invalidated.count) activities invalidated")
        if !invalidated.isEmpty { await updateAdvertisement() }
    }

    /// `hello`, after the gateway agreed on a version: the app's name and the types it handles.
    func hello(app: String, handles: [String], from caller: Caller) throws(ProtocolError) {
        guard try clients.hello(caller.client, app: app, handles: handles) else { return }
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
        let own = activities.current(of: caller.uid, at: .now)
        let current = caller.uid == 0 ? own ?? activities.current(at: .now) : own
        let temporaryTimeout = bluetoothdTemporaryTimeout()
        return StatusResult(
            daemon: settings.daemonName, adapter: radioStatus.adapter, adapterAddress: radioStatus.adapterAddress,
            radio: radioStatus.phase.description, scanning: radioStatus.scanning, advertising: radioStatus.advertising,
            lastError: radioStatus.lastError, accounts: accounts.visible(to: caller.uid).map(\.name),
            nearbyCount: nearbyActivities(for: caller).count, clientCount: clients.count,
            localActivityCount: activities.count,
            currentActivityType: current?.type.rawValue,
            epochSeconds: settings.epochSeconds, beaconsRecognized: nearby.recognized, beaconsRejected: nearby.rejected,
            beaconCopiesRefused: nearby.copies, continuation: advertiser.policy.availability,
            notAdvertised: notAdvertised(own, of: caller.uid, radio: radioStatus),
            scanReportsDropped: radioStatus.droppedReports, scanReportsHeard: nearby.heard,
            deviceName: devices.identity.card.name, deviceFingerprint: devices.identity.card.fingerprint,
            scanPath: radioStatus.scanPath.rawValue,
            bluetoothdMainConf: temporaryTimeout == nil ? nil : settings.bluetoothdMainConf,
            bluetoothdTemporaryTimeout: temporaryTimeout)
    }

    /// bluetoothd's `TemporaryTimeout` as its `main.conf` says, read afresh (bluetoothd reads it when it
    /// starts); nil when the file cannot be read or none is configured.
    private func bluetoothdTemporaryTimeout() -> Int? {
        guard let path = settings.bluetoothdMainConf, let text = try? String(contentsOfFile: path, encoding: .utf8)
        else { return nil }
        return BluetoothdTemporaryTimeout(mainConf: text).seconds
    }

    /// Why `uid`'s own current activity is not on the air, if it has one that is not.
    /// Each user's current activity has an advertising slot of its own (docs/protocol.md, status).
    private func notAdvertised(_ own: LocalActivity?, of uid: UInt32, radio: RadioStatus) -> String? {
        guard own != nil else { return nil }
        if !advertiser.policy.advertise { return "advertising is withheld: see continuation" }
        guard let account = accounts.advertisingAccount(for: uid) else { return "no account to advertise it under" }
        guard let slot = advertiser.slot(of: account.id) else {
            return "another user's current activity is advertised under the same account (\(account.name)); one per account"
        }
        if let error = radio.slotErrors[slot] { return error }
        if !radio.advertisingSlots.contains(slot) { return "the radio is not advertising: see radio and lastError" }
        return nil
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
        if let problem = devices.forgetRoster(account: name) { logger.error("device roster not removed: \(problem)") }
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
