import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol
import HandoffStore

/// Removing a device (docs/devices.md, section 7): `devices.remove` on the remover, delivering the
/// new key to each remaining device when it is next heard, and installing it on a recipient.
extension HandoffDaemon {
    // MARK: devices.remove

    /// `devices.remove`: a new key for the account at once, an envelope kept for each other device.
    func removeDevice(_ params: DevicesRemoveParams, for caller: Caller) async throws(ProtocolError) -> DevicesRemoveResult {
        let wanted = params.device.trimmingWhitespaceCharacters()
        let usable = accounts.visible(to: caller.uid).filter { params.account == nil || $0.name == params.account }
        if let name = params.account, usable.isEmpty {
            throw ProtocolError(.notFound, "no account \"\(name)\" that you may use")
        }
        let me = devices.identity.card
        if me.name == wanted || me.fingerprint == wanted.lowercased() {
            throw ProtocolError(
                .invalidParams,
                "\"\(wanted)\" is this device: a device cannot remove itself (remove it from another device of the account)")
        }
        var matches: [(key: AccountKey, device: DeviceRoster.Device)] = []
        for key in usable {
            for device in devices.devices(of: key.id) where device.card.name == wanted || device.card.fingerprint == wanted.lowercased() {
                matches.append((key, device))
            }
        }
        guard let (key, target) = matches.first else {
            throw ProtocolError(.notFound, "no device \"\(wanted)\" in your accounts; see handoffctl devices")
        }
        guard matches.count == 1 else {
            let list = matches.map { "\($0.device.card.fingerprint) (\($0.device.card.name), account \($0.key.name))" }
            throw ProtocolError(
                .conflict, "\"\(wanted)\" names several devices: \(list.joined(separator: ", ")); give the fingerprint and the account")
        }
        if let waiting = rekeys.pending(account: key.name) {
            throw ProtocolError(
                .conflict,
                "an earlier removal from account \(key.name) still waits for \(waiting.envelopes.count) device(s); remove more devices once they have the new key, or within 14 days of it")
        }
        let plan: RekeyPlan
        do {
            var generator = SystemRandomNumberGenerator()
            plan = try RekeyPlan(
                account: key, removing: [target.card.fingerprint], roster: devices.roster(of: key.id),
                identity: devices.identity, using: &generator)
        } catch .tooManyRemoved(let count) {
            throw ProtocolError(.invalidParams, "at most \(RekeyFormat.maximumRemoved) devices per removal, not \(count)")
        } catch {
            throw ProtocolError(.internal, "the removal could not be planned: \(error)")
        }
        let now = Self.wallClock()
        let stored = PendingRekey(
            retired: key, newAccount: plan.newAccount.id, removed: plan.removed, started: now,
            deliveries: plan.envelopes.map { PendingRekey.Delivery(device: $0.recipient, envelope: $0.bytes) })
        // The envelopes first, then the key: a crash in between leaves a pending rekey whose
        // retired key is still the current one, which the next start discards.
        if let store = devices.store, !stored.deliveries.isEmpty {
            do { try store.save(stored, account: key.name) } catch {
                throw ProtocolError(.internal, "the new key's envelopes could not be saved: \(error)")
            }
        }
        do { try accounts.replace(with: plan.newAccount) } catch {
            try? devices.store?.removePendingRekey(account: key.name)
            throw error
        }
        if let problem = devices.drop(plan.removed, account: key.id) { logger.error("device roster not saved: \(problem)") }
        devices.rekeyed(from: key.id, to: plan.newAccount.id)
        var envelopes: [String: RekeyEnvelope] = [:]
        for envelope in plan.envelopes { envelopes[envelope.recipient] = envelope }
        if !envelopes.isEmpty { rekeys.set(.init(stored: stored, envelopes: envelopes), name: key.name) }
        let names = Dictionary(devices.devices(of: plan.newAccount.id).map { ($0.card.fingerprint, $0.card.name) }, uniquingKeysWith: { a, _ in a })
        let pending = plan.envelopes.map { RemovedDevice(name: names[$0.recipient] ?? $0.recipient, fingerprint: $0.recipient) }
        let waiting = pending.isEmpty ? "no device" : pending.map(\.fingerprint).joined(separator: ", ")
        logger.notice(
            "device \(String(reflecting: target.card.name)) (key \(target.card.fingerprint)) removed from account \(key.name) by uid \(caller.uid): new account fingerprint \(plan.newAccount.id); the new key waits for \(waiting)")
        accountsChanged()
        await updateAdvertisement()
        return DevicesRemoveResult(
            account: key.name, fingerprint: plan.newAccount.id.description,
            removed: RemovedDevice(name: target.card.name, fingerprint: target.card.fingerprint), pending: pending,
            until: Date(timeIntervalSince1970: stored.expires))
    }

    /// Loads the pending rekeys of the current accounts (at the start and after account changes).
    func loadRekeys() {
        if !rekeys.expire(now: Self.wallClock()).isEmpty {
            for key in accounts.keys.values where rekeys.pending(account: key.name) == nil {
                try? devices.store?.removePendingRekey(account: key.name)
            }
            logger.notice("pending new keys not delivered within 14 days are given up; those devices must pair again")
        }
        let problems = rekeys.load(
            keys: Array(accounts.keys.values), store: devices.store, identity: devices.identity,
            rosters: { [devices] key in devices.roster(of: key.id) }, now: Self.wallClock())
        for problem in problems { logger.error("pending new key: \(problem)") }
    }

    // MARK: Delivering (the remover)

    /// A beacon heard under a retired key: a device still waiting for the new key, if it is one.
    /// Its activity is not listed (the removed device still sends under that key).
    func heardRetired(_ beacon: RecognizedBeacon, device path: String?) {
        let now = Self.wallClock()
        if !rekeys.expire(now: now).isEmpty {
            forgetExpiredRekeys()
            return
        }
        guard let (name, pending) = rekeys.account(retired: beacon.origin.account), let current = accounts.keys[name],
            let device = devices.device(sending: beacon.origin, key: pending.stored.retired, roster: current.id),
            pending.envelopes[device.card.fingerprint] != nil
        else { return }
        rekeys.noteHeard(device.card.fingerprint, account: name, beacon: beacon, device: path)
        deliverRekey(to: device.card, account: name, beacon: beacon)
    }

    private func forgetExpiredRekeys() {
        for key in accounts.keys.values where rekeys.pending(account: key.name) == nil {
            try? devices.store?.removePendingRekey(account: key.name)
        }
        logger.notice("pending new keys not delivered within 14 days are given up; those devices must pair again")
        accountsChanged()
    }

    /// Delivers the envelope waiting for `card` (or first introduces this device to it), with the
    /// pacing of introductions: one at a time, none during a continuation, 30 s after any other
    /// exchange, backing off after failures.
    private func deliverRekey(to card: DeviceCard, account name: String, beacon: RecognizedBeacon) {
        guard let link, beacon.flags.contains(.reachable), outgoing.isEmpty,
            devices.mayIntroduce(beacon.origin, now: .now), let pending = rekeys.pending(account: name)
        else { return }
        let fingerprint = card.fingerprint
        let introducing = pending.introduce.contains(fingerprint)
        let origin = beacon.origin
        let job = ContinuationJob(
            timeout: Self.introductionTimeout,
            origin: { [weak self] in await self?.rekeys.pending(account: name)?.heard[fingerprint]?.device },
            request: { [weak self] in await self?.rekeyRequest(fingerprint, account: name, introducing: introducing) },
            trace: { [logger] step in logger.debug("new key for device \(fingerprint): \(step)") },
            keepsLink: { false })
        logger.debug(
            introducing
                ? "introducing this device to device \(fingerprint) before delivering the new key of \(name)"
                : "delivering the new key of account \(name) to device \(fingerprint)")
        let task = Task { [weak self] in
            let result = await link.fetch(job)
            await self?.rekeyDelivered(fingerprint, name: card.name, account: name, origin: origin, introducing: introducing, result)
        }
        devices.begin(origin, task: task)
    }

    private func rekeyRequest(_ fingerprint: String, account name: String, introducing: Bool) -> PendingContinuation? {
        guard let pending = rekeys.pending(account: name), let heard = pending.heard[fingerprint],
            let envelope = pending.envelopes[fingerprint]
        else { return nil }
        let retired = pending.stored.retired
        let epoch = advertiser.encoder.configuration.epoch(containing: Self.wallClock())
        let requester = outgoing.requester(for: retired.id, epoch: epoch, own: nil)
        if introducing {
            return PendingContinuation(
                beacon: heard.beacon, account: retired, requester: requester, introducing: devices.identity.card)
        }
        return PendingContinuation(beacon: heard.beacon, account: retired, requester: requester, rekey: envelope)
    }

    private func rekeyDelivered(
        _ fingerprint: String, name deviceName: String, account name: String, origin: BeaconOrigin, introducing: Bool,
        _ result: Result<ExchangeResponse, ContinueError>
    ) {
        switch result {
        case .success(.rekeyInstalled):
            devices.end(origin, succeeded: true, now: .now)
            logger.notice("delivered the new key of account \(name) to device \(String(reflecting: deviceName)) (key \(fingerprint))")
            rekeyReached(fingerprint, account: name)
        case .success(.card):
            devices.end(origin, succeeded: true, now: .now)
            rekeys.needsIntroduction(fingerprint, account: name, false)
            logger.info("introduced this device to device \(fingerprint); its new key of account \(name) follows")
        case .success(.activity):
            devices.end(origin, succeeded: false, now: .now)
        case .failure(let failure):
            devices.end(origin, succeeded: failure.code == .cancelled ? nil : false, now: .now)
            guard failure.code != .cancelled else { return }
            if !introducing, failure.message.firstRange(of: ExchangeStatus.unknownDevice.description) != nil {
                rekeys.needsIntroduction(fingerprint, account: name, true)
            }
            logger.info("the new key of account \(name) not delivered to device \(fingerprint) (\(failure.code.rawValue)): \(failure.message)")
        }
    }

    /// `fingerprint` has the new key of the account `name` (acknowledged, or heard under it):
    /// its envelope goes; with none left, the retired key goes too.
    func rekeyReached(_ fingerprint: String, account name: String) {
        guard let left = rekeys.delivered(fingerprint, account: name) else { return }
        if left.envelopes.isEmpty {
            rekeys.set(nil, name: name)
            do { try devices.store?.removePendingRekey(account: name) } catch {
                logger.error("pending new key not removed: \(error)")
            }
            logger.notice("every remaining device of account \(name) has its new key; the old key is forgotten")
            accountsChanged()
        } else if let store = devices.store {
            do { try store.save(left.stored, account: name) } catch { logger.error("pending new key not saved: \(error)") }
        }
    }

    // MARK: Installing (the recipient)

    /// Answers a rekey: opens the envelope, installs the new key (no acknowledgement if it cannot
    /// be written), drops the removed devices, and acknowledges.
    func serveRekey(_ accepted: ContinuationServer.Accepted, _ context: ContinuationRequestContext)
        throws(ExchangeStatus) -> ContinuationReply
    {
        guard let old = key(accepted.account) else {
            logger.notice("new account key from \(context.peer) refused: the account is gone")
            throw .notCurrent
        }
        let contents: RekeyEnvelope.Contents
        do {
            contents = try origin.openRekey(accepted, identity: devices.identity, roster: devices.roster(of: old.id))
        } catch {
            logger.notice("new key of account \(old.name) from \(context.peer) refused: \(error)")
            throw error.status
        }
        do { try accounts.replace(with: contents.newAccount) } catch {
            logger.error("new key of account \(old.name) not installed: \(error)")
            throw .notCurrent
        }
        if let problem = devices.drop(contents.removed, account: old.id) { logger.error("device roster not saved: \(problem)") }
        devices.rekeyed(from: old.id, to: contents.newAccount.id)
        // A removal of our own still waiting is bound to the key just replaced: it is given up.
        if rekeys.pending(account: old.name) != nil {
            rekeys.set(nil, name: old.name)
            try? devices.store?.removePendingRekey(account: old.name)
        }
        logger.notice(
            "account \(old.name) has a new key from device \(contents.sender) (new fingerprint \(contents.newAccount.id)); removed: \(contents.removed.joined(separator: ", "))")
        accountsChanged()
        Task { [weak self] in await self?.updateAdvertisement() }
        let chunks = origin.respond(to: accepted, installed: contents, mtu: context.mtu)
        let exchange = origin.begin { [weak self] id in await self?.endRekeyExchange(id) }
        return ContinuationReply(notifications: chunks) { [weak self] _ in await self?.endRekeyExchange(exchange) }
    }

    private func endRekeyExchange(_ id: UInt64) { _ = origin.end(id) }
}
