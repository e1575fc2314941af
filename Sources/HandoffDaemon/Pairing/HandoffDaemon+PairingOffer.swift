import BlueZ
import DBus
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Synchronization
import HandoffCore
import HandoffProtocol

/// Pairing, the offering side (docs/pairing.md, sections 2 and 5): `pair.offer` and the joiner's writes.
extension HandoffDaemon {
    // MARK: Offering side

    /// `pair.offer`: `answer` gets the result before any event of the attempt can be queued.
    func offerPairing(
        _ params: PairOfferParams, from caller: Caller, answer: @Sendable (PairStarted) -> Void
    ) async throws(ProtocolError) {
        let timeout = try Self.pairingTimeout(params.timeout)
        let bluez = try checkNoPairing()
        let visible = accounts.visible(to: caller.uid)
        let account: AccountKey
        if let wanted = params.account {
            guard let found = visible.first(where: { $0.name == wanted }) else {
                throw ProtocolError(.notFound, "no account \"\(wanted)\" that you may use")
            }
            account = found
        } else {
            guard let first = visible.first else {
                throw ProtocolError(.noAccount, "uid \(caller.uid) has no handoff account to offer; create one with: handoffctl account create NAME")
            }
            account = first
        }
        var generator = SystemRandomNumberGenerator()
        let advertisement = PairingAdvertisement(using: &generator)
        let offerer = PairingOfferer(advertisement: advertisement, account: account, using: &generator)
        let name = pairing.nextName()
        pairing.attempt = PairingState.Attempt(
            name: name, client: caller.client, uid: caller.uid,
            role: .offer(offerer, service: nil, bound: nil, mtu: ContinuationFormat.minimumMTU), account: account.name)
        // The previous offer's service may still be going.
        await pairing.closing?.value
        let service: PairingGattService
        do {
            service = try await PairingGattService.start(bluez: bluez) { [weak self] message, options in
                guard let self else { throw GattError.applicationError(0x80 | PairingFailure.busy.rawValue) }
                try await self.offerReceived(name, message, options)
            }
        } catch {
            if pairing.attempt?.name == name { pairing.attempt = nil }
            throw ProtocolError(.internal, "the pairing service could not be registered with bluetoothd: \(error)")
        }
        guard var attempt = pairing.attempt, attempt.name == name, case .offer(let offerer, _, _, let mtu) = attempt.role
        else {
            // Cancelled (the client left) while registering.
            await service.close()
            throw ProtocolError(.conflict, "the pairing was cancelled while it started")
        }
        attempt.role = .offer(offerer, service: service, bound: nil, mtu: mtu)
        attempt.task = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            await self?.endPairing(name, .timeout, "no laptop finished pairing within \(timeout.components.seconds) s")
        }
        pairing.attempt = attempt
        answer(PairStarted(pairing: name, account: account.name))
        logger.notice("pairing \(name): offering account \(account.name) (\(account.id)) for uid \(caller.uid)")
        pairing.onAir = RadioAdvertisement(payload: advertisement.payload, type: .peripheral)
        await updateAdvertisement()
    }

    /// A message the joiner wrote to the offer's service. Throws the write's refusal.
    func offerReceived(_ name: String, _ message: [UInt8], _ options: GattRequestOptions) async throws {
        func refuse(_ code: PairingFailure) -> DBusError { GattError.applicationError(0x80 | code.rawValue) }
        guard var attempt = pairing.attempt, attempt.name == name,
            case .offer(var offerer, let service, let bound, var mtu) = attempt.role, let service
        else {
            // A write that crossed the end of this offer learns why it ended.
            if let ended = pairing.endedOffer, ended.name == name { throw refuse(ended.code) }
            throw refuse(.busy)
        }
        let device = options.device
        if let bound, device != bound { throw refuse(.busy) }
        if let options = options.mtu { mtu = Int(options) }
        if let code = PairingFormat.failure(in: message) {
            guard bound != nil else { throw refuse(.unexpected) }
            await endPairing(name, code, Self.peerMessage(code), tellPeer: false)
            return
        }
        let session = offerer.advertisement.session
        do throws(PairingError) {
            var newlyBound = bound
            var reply: [UInt8]?
            var number: PairingNumber?
            var paired = false
            switch message.count >= 2 ? message[1] : 0 {
            case PairingFormat.MessageType.start.rawValue:
                guard bound == nil else { throw PairingError(.busy) }
                reply = try offerer.receiveStart(message)
                newlyBound = device
                logger.info("pairing \(name): a laptop connected (\(device?.rawValue ?? "unknown device"))")
            case PairingFormat.MessageType.nonceJ.rawValue:
                let answered = try offerer.receiveNonce(message)
                reply = answered.reply
                number = answered.number
            case PairingFormat.MessageType.confirm.rawValue:
                var generator = SystemRandomNumberGenerator()
                reply = try offerer.receiveConfirm(message, using: &generator)
            case PairingFormat.MessageType.done.rawValue:
                try offerer.receiveDone(message)
                paired = true
            default:
                throw PairingError(bound == nil ? .malformed : .unexpected)
            }
            attempt.role = .offer(offerer, service: service, bound: newlyBound, mtu: mtu)
            if let number { attempt.number = number.description }
            pairing.attempt = attempt
            if number != nil { sendPairNumber(attempt) }
            if let reply { service.send(reply, session: session, mtu: mtu) }
            if paired {
                let account = offerer.accountName
                await finishPairing(
                    name, paired: AccountInfo(
                        name: account, fingerprint: key(named: account)?.id.description ?? "",
                        owner: accounts.owner(of: account)))
            }
        } catch {
            // A stranger's bad first write does not end the offer; anything from the bound laptop does.
            if bound == nil && error.code != .busy {
                throw refuse(error.code)
            }
            if bound != nil {
                await endPairing(name, error.code, Self.localMessage(error.code), tellPeer: false)
            }
            throw refuse(error.code)
        }
    }
}
