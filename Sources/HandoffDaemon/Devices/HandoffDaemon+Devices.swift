#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol

/// Which device an activity comes from (docs/devices.md): naming nearby
/// entries from the rosters, introductions both ways, and `devices`.
extension HandoffDaemon {
    /// How long an introduction may take, connecting included: as long as a continuation's
    /// default (on the VM rig's emulated CPU one took 5.1 s, most of it resolving services).
    static let introductionTimeout: Duration = .seconds(10)

    // MARK: Continuing side

    /// Names the entry's origin device from its account's roster; when the device is
    /// unknown, starts an introduction to it (one at a time, none while a continuation
    /// needs the link). Returns the entry as it now is.
    func identifyDevice(_ entry: NearbyEntry) -> NearbyEntry {
        guard let key = key(entry.account) else { return entry }
        if let device = devices.device(sending: entry.origin, key: key) {
            devices.heard(device, account: entry.account, now: Self.wallClock())
            // Heard under the new key: it has it, whatever became of the acknowledgement.
            if rekeys.isPending(device.card.fingerprint, account: entry.accountName) {
                logger.info("device \(device.card.fingerprint) is heard under the new key of account \(entry.accountName)")
                rekeyReached(device.card.fingerprint, account: entry.accountName)
            }
            for problem in devices.save() { logger.error("device roster not saved: \(problem)") }
            return nearby.setDevice(entry.id, name: device.card.name, fingerprint: device.card.fingerprint) ?? entry
        }
        guard settings.introductions else { return entry }
        guard settings.introductionDelay > .zero else {
            introduce(entry)
            return entry
        }
        if devices.scheduleIntroduction(entry.id, due: .now + settings.introductionDelay), !devices.introductionTimer.isSet {
            scheduleIntroductions()
        }
        return entry
    }

    /// Sets the introductions' timer for the first pending one, if any.
    private func scheduleIntroductions() {
        devices.introductionTimer.set(at: devices.nextIntroduction) { [weak self] in await self?.introduceDue() }
    }

    /// The delayed introductions now due: each if its entry is still nearby and its device still unknown.
    private func introduceDue() {
        for id in devices.dueIntroductions(now: .now) {
            guard let entry = nearby.entry(id), let key = key(entry.account),
                devices.device(sending: entry.origin, key: key) == nil
            else { continue }
            introduce(entry)
        }
        scheduleIntroductions()
    }

    private func introduce(_ entry: NearbyEntry) {
        guard let link, entry.flags.contains(.reachable), outgoing.isEmpty, devices.mayIntroduce(entry.origin, now: .now)
        else { return }
        let nearbyID = entry.id
        let origin = entry.origin
        let job = ContinuationJob(
            timeout: Self.introductionTimeout,
            origin: { [weak self] in await self?.nearby.entry(nearbyID)?.device },
            request: { [weak self] in await self?.request(for: nearbyID, introducing: true) },
            trace: { [logger] step in logger.debug("introduction to device \(origin.device): \(step)") },
            keepsLink: { [weak self] in await self?.outgoing.involves(origin: origin.device.description) ?? false })
        logger.debug("introducing this device to device \(origin.device) of \(entry.accountName)")
        let task = Task { [weak self] in
            let result = await link.fetch(job)
            await self?.introduced(nearbyID, origin: origin, result)
        }
        devices.begin(origin, task: task)
    }

    private func introduced(_ nearbyID: String, origin: BeaconOrigin, _ result: Result<ExchangeResponse, ContinueError>) {
        switch result {
        case .success(.card(let card)):
            devices.end(origin, succeeded: true, now: .now)
            if devices.learn(card, account: origin.account, now: Self.wallClock()) {
                logger.info("met device \(String(reflecting: card.name)) (key \(card.fingerprint)) of account \(accountName(origin.account))")
            }
            for problem in devices.save() { logger.error("device roster not saved: \(problem)") }
            // The entry that was asked about, whatever its identifier says (a device that
            // derives no identifiers), then every entry of the account the roster now names.
            if let named = nearby.setDevice(nearbyID, name: card.name, fingerprint: card.fingerprint) { tell(.updated, named) }
            renameEntries(of: origin.account)
        case .success(.activity), .success(.rekeyInstalled):
            devices.end(origin, succeeded: false, now: .now)
        case .failure(let failure):
            devices.end(origin, succeeded: failure.code == .cancelled ? nil : false, now: .now)
            if failure.code != .cancelled {
                logger.info("device \(origin.device) could not be asked its name (\(failure.code.rawValue)): \(failure.message)")
            }
        }
    }

    /// Names the account's nearby entries whose devices the roster knows; tells the changes.
    private func renameEntries(of account: AccountID) {
        guard let key = key(account) else { return }
        for entry in nearby.registry.all where entry.account == account {
            guard let device = devices.device(sending: entry.origin, key: key),
                let named = nearby.setDevice(entry.id, name: device.card.name, fingerprint: device.card.fingerprint)
            else { continue }
            tell(.updated, named)
        }
    }

    private func accountName(_ account: AccountID) -> String {
        key(account)?.name ?? account.description
    }

    // MARK: Origin side

    /// Answers an introduction: records the requester's card, sends ours.
    func serveIntroduction(_ accepted: ContinuationServer.Accepted, card: DeviceCard, _ context: ContinuationRequestContext)
        throws(ExchangeStatus) -> ContinuationReply
    {
        guard key(accepted.account) != nil else {
            logger.notice("introduction from \(context.peer) refused: the account is gone")
            throw .notCurrent
        }
        if devices.learn(card, account: accepted.account, now: Self.wallClock()) {
            logger.info("met device \(String(reflecting: card.name)) (key \(card.fingerprint)) of account \(accountName(accepted.account))")
        }
        for problem in devices.save() { logger.error("device roster not saved: \(problem)") }
        renameEntries(of: accepted.account)
        let (_, chunks) = origin.respond(to: accepted, introducing: devices.identity.card, mtu: context.mtu)
        let exchange = origin.begin { [weak self] id in await self?.forgetExchange(id) }
        return ContinuationReply(notifications: chunks) { [weak self] _ in await self?.forgetExchange(exchange) }
    }

    private func forgetExchange(_ id: UInt64) { _ = origin.end(id) }

    // MARK: devices

    /// `devices`: this device and the known devices of each account the caller may use.
    func deviceList(for caller: Caller) -> DevicesResult {
        let now = Date()
        var result: [DeviceInfo] = []
        for key in accounts.keys.values.sorted(by: { $0.name < $1.name }) where accounts.mayUse(key.name, uid: caller.uid) {
            result.append(
                DeviceInfo(
                    account: key.name, name: devices.identity.card.name, fingerprint: devices.identity.card.fingerprint,
                    thisDevice: true, nearby: false, introduced: nil, lastHeard: nil))
            let nearbyKeys = Set(nearby.registry.all.filter { $0.account == key.id }.compactMap(\.deviceFingerprint))
            for device in devices.devices(of: key.id) {
                result.append(
                    DeviceInfo(
                        account: key.name, name: device.card.name, fingerprint: device.card.fingerprint,
                        thisDevice: false, nearby: nearbyKeys.contains(device.card.fingerprint),
                        introduced: Date(timeIntervalSince1970: device.introduced),
                        lastHeard: device.lastHeard.map { min(Date(timeIntervalSince1970: $0), now) },
                        newKeyPending: rekeys.isPending(device.card.fingerprint, account: key.name) ? true : nil))
            }
        }
        return DevicesResult(devices: result)
    }
}
