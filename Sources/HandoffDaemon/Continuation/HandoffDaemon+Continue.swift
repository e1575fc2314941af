import BlueZ
import DBus
import Foundation
import HandoffCore
import HandoffProtocol

/// A `continue` that has not finished.
struct OutgoingContinuation: Sendable {
    let client: UInt64
    let nearbyID: String
    let account: AccountKey
    let typeHash: ActivityTypeHash
    let origin: String
    var task: Task<Void, Never>?
}

/// The continuing side of `continue` and `continue.cancel` (docs/protocol.md):
/// `willContinue` at once, then exactly one `continued` or `continueFailed`.
extension HandoffDaemon {
    static let defaultContinueTimeout = 10.0

    /// Answers `continue`. The result frame is queued here, before anything that
    /// could queue the continuation's event; the returned frame is empty.
    func startContinuation(_ params: ContinueParams, id: Int?, client: ClientSession) throws -> Data {
        let seconds = params.timeout ?? Self.defaultContinueTimeout
        guard seconds.isFinite, seconds >= 1, seconds <= 60 else {
            throw ProtocolError(.invalidParams, "timeout must be between 1 and 60 seconds")
        }
        guard let entry = nearby.entry(params.id), accounts.mayUse(entry.accountName, uid: client.uid),
            let account = accounts.keys.values.first(where: { $0.id == entry.account })
        else {
            throw ProtocolError(.notFound, "no nearby activity \"\(params.id)\"; see handoffctl list")
        }
        nextContinuation += 1
        let name = "c\(nextContinuation)"
        let will = WillContinue(continuation: name, nearbyID: entry.id, type: entry.activityType.type?.rawValue)
        _ = client.outbox.send(try WireFormat.result(id: id, will))
        var pending = OutgoingContinuation(
            client: client.id, nearbyID: entry.id, account: account, typeHash: entry.typeHash,
            origin: entry.origin.device.description)
        if handlers(of: entry.activityType.type).isEmpty && !entry.flags.contains(.hasWebpageURL) {
            let what = entry.activityType.type?.rawValue ?? "type \(entry.typeHash)"
            fail(name, pending, ContinueFailed(.noHandler, "no app here handles \(what), and the activity has no webpage URL"))
            return Data()
        }
        guard let bluez else {
            fail(name, pending, ContinueFailed(.outOfRange, "handoffd has not started its Bluetooth side yet"))
            return Data()
        }
        let timeout = Duration.milliseconds(Int64(seconds * 1000))
        let nearbyID = entry.id
        let fetch = ContinuationFetch(
            connection: bluez.connection, manager: bluez.manager, timeout: timeout,
            currentDevice: { [weak self] in await self?.device(ofNearby: nearbyID) },
            makeRequest: { [weak self] in await self?.continuationRequest(nearbyID: nearbyID) },
            awaitDisconnection: { [weak self] device in await self?.disconnection(of: device)?.value },
            pauseDiscovery: { [radio] in await radio.pauseDiscovery() },
            resumeDiscovery: { [radio] in await radio.resumeDiscovery() },
            trace: { [logger] step in logger.debug("continuation \(name): \(step)") })
        logger.info("continuing \(will.type ?? "an activity") from device \(entry.origin.device) (\(name))")
        pending.task = Task { [weak self] in
            let result = await fetch.run()
            await self?.finishContinuation(name, result)
            // Not cancelled with the fetch: the link must go whatever happened.
            let cleanup = Task { await fetch.cleanUp() }
            let devices = fetch.touchedDevices
            await self?.noteDisconnection(cleanup, of: devices)
            await cleanup.value
            await self?.endDisconnection(cleanup, of: devices)
        }
        continuations[name] = pending
        return Data()
    }

    /// Answers `continue.cancel`: the result, then the `continueFailed` event.
    func cancelContinuation(_ params: ContinuationParams, id: Int?, client: ClientSession) throws -> Data {
        guard let pending = continuations[params.continuation], pending.client == client.id else {
            throw ProtocolError(.notFound, "this connection has no unfinished continuation \"\(params.continuation)\"")
        }
        continuations[params.continuation] = nil
        pending.task?.cancel()
        _ = client.outbox.send(try WireFormat.result(id: id, EmptyResult()))
        fail(params.continuation, pending, ContinueFailed(.cancelled, "cancelled by the client"))
        return Data()
    }

    /// A closed connection's continuations end without events.
    func cancelContinuations(of client: UInt64) {
        for (name, pending) in continuations where pending.client == client {
            continuations[name] = nil
            pending.task?.cancel()
        }
    }

    /// The daemon is stopping: every continuation fails with `cancelled`.
    func cancelAllContinuations() {
        for (name, pending) in continuations {
            continuations[name] = nil
            pending.task?.cancel()
            fail(name, pending, ContinueFailed(.cancelled, "handoffd is stopping"))
        }
    }

    // MARK: The fetch's questions

    /// The disconnection of `device` under way, if any: a new Connect waits for it,
    /// or bluetoothd would answer at once for the link that is going down.
    func disconnection(of device: DBusObjectPath) -> Task<Void, Never>? { disconnecting[device] }

    func noteDisconnection(_ task: Task<Void, Never>, of devices: [DBusObjectPath]) {
        for device in devices { disconnecting[device] = task }
    }

    func endDisconnection(_ task: Task<Void, Never>, of devices: [DBusObjectPath]) {
        for device in devices where disconnecting[device] == task { disconnecting[device] = nil }
    }

    /// The Device1 that carried the nearby activity's newest beacon.
    func device(ofNearby id: String) -> DBusObjectPath? {
        nearby.entry(id)?.device.flatMap { try? DBusObjectPath($0) }
    }

    /// A fresh request for the activity's newest beacon.
    func continuationRequest(nearbyID: String) -> PendingContinuation? {
        guard let entry = nearby.entry(nearbyID), let heard = heardBeacons[nearbyID],
            let account = accounts.keys.values.first(where: { $0.id == entry.account })
        else { return nil }
        return PendingContinuation(
            beacon: heard.beacon, tag: heard.tag, account: account, requester: requesterID(for: account))
    }

    /// Our per-epoch device identifier for `account`: the one our beacons carry, or one drawn for the epoch.
    func requesterID(for account: AccountKey) -> DeviceID {
        let epoch = encoder.configuration.epoch(containing: Self.wallClock())
        if let origin = encoder.currentOrigin(for: account.id), origin.epoch == epoch { return origin.device }
        if let kept = requesterIDs[account.id], kept.epoch == epoch { return kept.device }
        let fresh = DeviceID(rawValue: .random(in: .min ... .max))
        requesterIDs[account.id] = (epoch, fresh)
        return fresh
    }

    /// Keeps the newest beacon of each nearby entry, for building requests.
    func rememberBeacon(_ beacon: RecognizedBeacon, payload: [UInt8], entry: NearbyEntry) {
        guard payload.count >= 5 else { return }
        heardBeacons[entry.id] = (beacon, Array(payload[1..<5]))
        if heardBeacons.count > settings.registryCap {
            heardBeacons = heardBeacons.filter { nearby.entry($0.key) != nil }
        }
    }

    // MARK: Finishing

    /// The connections that declared `type`, most recently connected first.
    func handlers(of type: ActivityType?) -> [ClientSession] {
        guard let type else { return [] }
        return clients.values.filter { $0.handles.contains(type) }.sorted { $0.id > $1.id }
    }

    func finishContinuation(_ name: String, _ result: Result<ActivityPayload, ContinueFailed>) {
        guard let pending = continuations.removeValue(forKey: name) else { return }
        let restored: ContinuedActivity
        do throws(ContinueFailed) {
            restored = try check(result.get(), pending)
        } catch {
            fail(name, pending, error)
            return
        }
        logger.info("continued \(restored.type) from device \(pending.origin) (\(name))")
        if let client = clients[pending.client] {
            send(.continued, ContinuedEvent(continuation: name, activity: restored), to: client)
        }
        let type = try? ActivityType(restored.type)
        if let requester = clients[pending.client], let type, requester.handles.contains(type) { return }
        if let app = handlers(of: type).first(where: { $0.id != pending.client }) {
            send(.continued, ContinuedEvent(continuation: name, activity: restored, forwarded: true), to: app)
        }
    }

    /// The checks of docs/continuation.md, section 5, before anything reaches an app.
    private func check(_ payload: ActivityPayload, _ pending: OutgoingContinuation) throws(ContinueFailed)
        -> ContinuedActivity
    {
        guard payload.type.hash(for: pending.account) == pending.typeHash else {
            throw ContinueFailed(.payloadInvalid, "the activity's type is not the one its beacon announced")
        }
        var userInfo: [String: JSONValue]?
        if let bytes = payload.userInfo {
            guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(bytes)) else {
                throw ContinueFailed(.payloadInvalid, "userInfo is not a JSON object")
            }
            userInfo = object
        }
        let missing = (payload.requiredUserInfoKeys ?? []).filter { userInfo?[$0] == nil }
        guard missing.isEmpty else {
            throw ContinueFailed(
                .payloadInvalid, "userInfo lacks required keys: \(missing.joined(separator: ", "))")
        }
        if handlers(of: payload.type).isEmpty && payload.webpageURL == nil {
            throw ContinueFailed(.noHandler, "no app here handles \(payload.type), and the activity has no webpage URL")
        }
        return ContinuedActivity(
            type: payload.type.rawValue, title: payload.title, userInfo: userInfo, webpageURL: payload.webpageURL,
            requiredUserInfoKeys: payload.requiredUserInfoKeys, account: pending.account.name, device: pending.origin)
    }

    private func fail(_ name: String, _ pending: OutgoingContinuation, _ failure: ContinueFailed) {
        logger.info("continuation \(name) failed (\(failure.code.rawValue)): \(failure.message)")
        guard let client = clients[pending.client] else { return }
        send(
            .continueFailed,
            ContinueFailedEvent(continuation: name, nearbyID: pending.nearbyID, code: failure.code, message: failure.message),
            to: client)
    }

    /// Queues an event for one client; a client that does not read its events is disconnected.
    func send(_ name: EventName, _ data: some Encodable, to client: ClientSession) {
        guard let frame = try? WireFormat.event(name, data) else { return }
        if !client.outbox.send(frame) {
            logger.warning("\(client.description) is not reading its events; disconnecting it")
            client.outbox.close()
        }
    }
}

extension NearbyRegistry.Change {
    /// The entry as it is after the change.
    var entry: NearbyEntry {
        switch self {
        case .appeared(let entry), .updated(let entry), .refreshed(let entry): entry
        }
    }
}
