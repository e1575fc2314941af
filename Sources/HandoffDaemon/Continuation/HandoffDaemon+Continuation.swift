#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol

/// Continuations, both ways: `continue` and `continue.cancel` for local apps,
/// and the requests of other devices for our current activity.
extension HandoffDaemon {
    // MARK: Continuing side

    /// `continue`: `answer` gets the `willContinue` result before anything
    /// could queue the continuation's event; then exactly one `continued` or
    /// `continueFailed` event follows.
    func continueActivity(
        _ params: ContinueParams, from caller: Caller, answer: @Sendable (WillContinue) -> Void
    ) throws(ProtocolError) {
        let seconds = params.timeout ?? OutgoingContinuations.defaultTimeout
        guard seconds.isFinite, seconds >= 1, seconds <= 60 else {
            throw ProtocolError(.invalidParams, "timeout must be between 1 and 60 seconds")
        }
        guard let entry = nearby.entry(params.id), accounts.mayUse(entry.accountName, uid: caller.uid),
            let account = key(entry.account)
        else {
            throw ProtocolError(.notFound, "no nearby activity \"\(params.id)\"; see handoffctl list")
        }
        var pending = OutgoingContinuations.Pending(
            client: caller.client, uid: caller.uid, nearbyID: entry.id, account: account, typeHash: entry.typeHash,
            origin: entry.origin.device.description)
        pending.wantsStream = params.streams == true
        pending.seconds = seconds
        pending.deadline = .now + .milliseconds(Int64(seconds * 1000))
        let (wantsStream, requests) = (pending.wantsStream, pending.requests)
        let name = outgoing.add(pending)
        let will = WillContinue(continuation: name, nearbyID: entry.id, type: entry.activityType.type?.rawValue)
        answer(will)
        if clients.handlers(of: entry.activityType.type, uid: caller.uid).isEmpty && !entry.flags.contains(.hasWebpageURL) {
            let what = entry.activityType.type?.rawValue ?? "type \(entry.typeHash)"
            return finish(name, .failure(ContinueError(.noHandler, "no app here handles \(what), and the activity has no webpage URL")))
        }
        if wantsStream, let problem = streamProblem(supportsStreams: entry.flags.contains(.supportsStreams), uid: caller.uid) {
            return finish(name, .failure(problem))
        }
        guard let link else {
            return finish(name, .failure(ContinueError(.outOfRange, "handoffd has no Bluetooth link for continuing")))
        }
        // An introduction under way (at most 5 s) finishes first: cancelling it would leave a link
        // going down that the continuation must wait for, while a finished one keeps it up for reuse.
        let introduction = devices.introduction?.task
        let nearbyID = entry.id
        let job = ContinuationJob(
            timeout: .milliseconds(Int64(seconds * 1000)),
            origin: { [weak self] in await self?.nearby.entry(nearbyID)?.device },
            request: { [weak self] in
                let request = await self?.request(for: nearbyID, takesStreams: wantsStream)
                requests.record(request)
                return request
            },
            trace: { [logger] step in logger.debug("continuation \(name): \(step)") })
        logger.info("continuing \(will.type ?? "an activity") from device \(entry.origin.device) (\(name))")
        outgoing.attach(Task { [weak self] in
            await introduction?.value
            // Cancelled meanwhile: `continueFailed` has gone already.
            if Task.isCancelled { return }
            let result = await link.fetch(job)
            await self?.finish(name, result)
        }, to: name)
    }

    /// `continue.cancel`: `answer` gets the result, then the `continueFailed` event follows.
    func cancelContinuation(_ name: String, from caller: Caller, answer: @Sendable () -> Void) throws(ProtocolError) {
        guard let pending = outgoing.cancel(name, of: caller.client) else {
            throw ProtocolError(.notFound, "this connection has no unfinished continuation \"\(name)\"")
        }
        answer()
        fail(name, pending, ContinueError(.cancelled, "cancelled by the client"))
    }

    /// A fresh request for the nearby activity's newest beacon; with `introducing`, an
    /// introduction carrying this device's card (docs/devices.md).
    func request(for nearbyID: String, introducing: Bool = false, takesStreams: Bool = false) -> PendingContinuation? {
        guard let entry = nearby.entry(nearbyID), let account = key(entry.account) else { return nil }
        let epoch = advertiser.encoder.configuration.epoch(containing: Self.wallClock())
        let requester = outgoing.requester(
            for: account.id, epoch: epoch, own: advertiser.encoder.currentOrigin(for: account.id))
        return PendingContinuation(
            beacon: entry.beacon, account: account, requester: requester,
            introducing: introducing ? devices.identity.card : nil, takesStreams: takesStreams)
    }

    func finish(_ name: String, _ result: Result<ExchangeResponse, ContinueError>) {
        devices.exchangeEnded(now: .now)
        guard let pending = outgoing.finish(name) else { return }
        let restored: ContinuedActivity
        do throws(ContinueError) {
            guard case .activity(let payload) = try result.get() else {
                throw ContinueError(.payloadInvalid, "the origin device answered with a device card")
            }
            restored = try OutgoingContinuations.check(payload, pending) {
                !clients.handlers(of: $0, uid: pending.uid).isEmpty
            }
            if pending.wantsStream { return try openStream(name, pending, restored, offer: payload.streamOffer) }
        } catch {
            return fail(name, pending, error)
        }
        deliver(name, pending, restored)
    }

    /// Sends `continued` to the connection that asked (with the stream's socket, if any) and, forwarded
    /// without it, to an app of the same user that handles the type.
    func deliver(_ name: String, _ pending: OutgoingContinuations.Pending, _ restored: ContinuedActivity, stream: StreamSocket? = nil) {
        logger.info("continued \(restored.type) from device \(pending.origin) (\(name))")
        clients.events?.send(
            .continued, ContinuedEvent(continuation: name, activity: restored, stream: stream), to: pending.client)
        let type = try? ActivityType(restored.type)
        if let requester = clients[pending.client], let type, requester.handles.contains(type) { return }
        // Only to an app of the requesting user: a decrypted activity never crosses uids.
        if let app = clients.handlers(of: type, uid: pending.uid).first(where: { $0.caller.client != pending.client }) {
            clients.events?.send(
                .continued, ContinuedEvent(continuation: name, activity: restored, forwarded: true), to: app.caller.client)
        }
    }

    func fail(_ name: String, _ pending: OutgoingContinuations.Pending, _ failure: ContinueError) {
        logger.info("continuation \(name) failed (\(failure.code.rawValue)): \(failure.message)")
        clients.events?.send(
            .continueFailed,
            ContinueFailedEvent(continuation: name, nearbyID: pending.nearbyID, code: failure.code, message: failure.message),
            to: pending.client)
    }

    // MARK: Origin side

    /// Checks one request from another device and returns the response's notifications.
    func serveContinuation(_ request: [UInt8], _ context: ContinuationRequestContext) async throws(ExchangeStatus)
        -> ContinuationReply
    {
        let accepted: ContinuationServer.Accepted
        do {
            accepted = try origin.accept(request, now: Self.wallClock())
        } catch {
            logger.notice("continuation request from \(context.peer) refused: \(error)")
            throw error
        }
        if accepted.rekey != nil { return try serveRekey(accepted, context) }
        if let card = accepted.requesterCard { return try serveIntroduction(accepted, card: card, context) }
        // The account may have been removed since the beacon went out (SIGHUP, account.remove).
        // Each user's current activity is on the air: the one asked for must still be its user's.
        guard key(accepted.account) != nil, let asked = activities.activity(accepted.activity),
            let activity = activities.current(of: asked.uid, at: .now), activity.id == accepted.activity
        else {
            logger.notice("continuation request from \(context.peer) refused: activity \(accepted.activity) is no longer current")
            throw .notCurrent
        }
        var payload: ActivityPayload
        do {
            payload = try activity.continuationPayload()
        } catch {
            logger.error("activity \(activity.id) cannot be sent: \(error)")
            throw .notCurrent
        }
        // Only for a request that takes streams (0x13) of an activity whose app takes them.
        if accepted.takesStreams && activity.supportsStreams {
            payload.streamOffer = await offerStream(for: activity, accepted: accepted)
        }
        let (bytes, chunks) = origin.respond(to: accepted, with: payload, mtu: context.mtu)
        let exchange = origin.begin { [weak self] id in await self?.exchangeTimedOut(id) }
        logger.info(
            "sending \(activity.type) (\(bytes) bytes in \(chunks.count) notifications, MTU \(context.mtu)) to device \(accepted.requester)")
        let requester = accepted.requester
        return ContinuationReply(notifications: chunks) { [weak self] delivered in
            await self?.exchangeEnded(exchange, delivered: delivered, activity: activity.id, requester: requester)
        }
    }

    private func exchangeTimedOut(_ exchange: UInt64) {
        guard origin.end(exchange) else { return }
        logger.warning("a continuation exchange did not finish within \(OriginExchanges.exchangeTimeout); forgotten")
    }

    private func exchangeEnded(_ exchange: UInt64, delivered: Bool, activity id: String, requester: DeviceID) {
        guard origin.end(exchange), delivered else { return }
        // wasContinued goes to the connection that published the activity, if it is still there.
        guard let activity = activities.activity(id), clients[activity.client] != nil else { return }
        logger.info("\(activity.type) (\(id)) was continued by device \(requester)")
        clients.events?.send(.wasContinued, WasContinuedEvent(id: id, byDevice: requester.description), to: activity.client)
    }
}
