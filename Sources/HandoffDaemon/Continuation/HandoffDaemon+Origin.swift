import BlueZ
import DBus
import Foundation
import HandoffCore
import HandoffProtocol

/// The origin side of a continuation (docs/continuation.md, sections 4 to 6):
/// requests written to our GATT service are checked by `ContinuationServer`,
/// answered with the current activity sealed and cut into notifications, and
/// the app that published it is told (`wasContinued`).
extension HandoffDaemon {
    /// Exchanges served at once; more are refused with `busy`.
    static let maximumExchanges = 4
    /// An exchange not finished this long after its request is forgotten.
    static let exchangeTimeout: Duration = .seconds(10)

    /// Exports and registers the GATT application; runs until the returned task is cancelled.
    func startContinuationService() async -> Task<Void, Never> {
        let connection = await radio.connection
        let manager = await radio.manager
        bluez = (connection, manager)
        let server = ContinuationGattServer(
            connection: connection, manager: manager, selector: await radio.configuration.adapter, logger: logger
        ) { [weak self] request, options in
            guard let self else { throw GattError.failed("handoffd is stopping") }
            return try await self.serveContinuationRequest(request, options: options)
        }
        gattServer = server
        return Task { await server.run() }
    }

    /// Checks one request and returns the response's notifications.
    /// - Throws: a `GattError` carrying the refusal: ATT error 0x80 + status (docs/continuation.md, section 5).
    func serveContinuationRequest(_ request: [UInt8], options: GattRequestOptions) throws
        -> ContinuationGattServer.Reply
    {
        let peer = options.device?.rawValue ?? "an unknown device"
        guard exchanges.count < Self.maximumExchanges else {
            logger.notice("continuation request from \(peer) refused: already \(Self.maximumExchanges) exchanges")
            throw Self.refusal(.busy)
        }
        let accepted: ContinuationServer.Accepted
        do {
            accepted = try continuationServer.accept(request, now: Self.wallClock())
        } catch {
            logger.notice("continuation request from \(peer) refused: \(error)")
            throw Self.refusal(error)
        }
        // The account may have been removed since the beacon went out (SIGHUP, account.remove).
        guard accounts.keys.values.contains(where: { $0.id == accepted.account }),
            let activity = activities.current(at: .now), activity.id == accepted.activity
        else {
            logger.notice("continuation request from \(peer) refused: activity \(accepted.activity) is no longer current")
            throw Self.refusal(.notCurrent)
        }
        let payload: ActivityPayload
        do {
            payload = try activity.continuationPayload()
        } catch {
            logger.error("activity \(activity.id) cannot be sent: \(error)")
            throw Self.refusal(.notCurrent)
        }
        let response = continuationServer.respond(to: accepted, with: payload)
        let mtu = Int(options.mtu ?? UInt16(ContinuationFormat.minimumMTU))
        let chunks = ResponseChunks.split(response, session: accepted.session, mtu: mtu)
        nextExchange += 1
        let exchange = nextExchange
        exchanges[exchange] = Task { [weak self] in
            try? await Task.sleep(for: Self.exchangeTimeout)
            guard !Task.isCancelled else { return }
            await self?.exchangeTimedOut(exchange)
        }
        logger.info(
            "sending \(activity.type) (\(response.count) bytes in \(chunks.count) notifications, MTU \(mtu)) to device \(accepted.requester)"
        )
        let requester = accepted.requester
        return ContinuationGattServer.Reply(notifications: chunks) { [weak self] delivered in
            await self?.exchangeEnded(exchange, delivered: delivered, activity: activity.id, requester: requester)
        }
    }

    /// The write's error for a refusal: application error 0x80 + status, which the
    /// continuing side reads back from "Operation failed with ATT error: 0x8N".
    static func refusal(_ status: ContinuationStatus) -> DBusError {
        GattError.applicationError(0x80 | status.rawValue)
    }

    private func exchangeTimedOut(_ exchange: UInt64) {
        guard exchanges.removeValue(forKey: exchange) != nil else { return }
        logger.warning("a continuation exchange did not finish within \(Self.exchangeTimeout); forgotten")
    }

    private func exchangeEnded(_ exchange: UInt64, delivered: Bool, activity id: String, requester: DeviceID) {
        guard let timer = exchanges.removeValue(forKey: exchange) else { return }
        timer.cancel()
        guard delivered else { return }
        // wasContinued goes to the connection that published the activity, if it is still there.
        guard let activity = activities.activity(id), let client = clients[activity.client] else { return }
        logger.info("\(activity.type) (\(id)) was continued by device \(requester)")
        send(.wasContinued, WasContinuedEvent(id: id, byDevice: requester.description), to: client)
    }
}

extension LocalActivity {
    /// What the continuing device receives (docs/continuation.md, "The payload").
    /// - Throws: `ActivityPayloadError` or an encoding error; publish's checks make both impossible.
    func continuationPayload() throws -> ActivityPayload {
        try ActivityPayload(
            type: type, title: title,
            userInfo: userInfo.isEmpty ? nil : Array(try WireFormat.compactJSON(userInfo)),
            webpageURL: webpageURL?.absoluteString,
            requiredUserInfoKeys: requiredUserInfoKeys.isEmpty ? nil : requiredUserInfoKeys)
    }
}
