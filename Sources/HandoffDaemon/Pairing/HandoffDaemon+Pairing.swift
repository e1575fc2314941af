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

/// Pairing over Bluetooth LE (docs/pairing.md; the socket side in docs/protocol.md, "Pairing"):
/// `pair.offer` on the laptop that gives an account, `pair.join` on the one that receives it.
/// One attempt at a time per daemon. Nothing secret is logged: not the account key, not the
/// agreed keys, not the number.
extension HandoffDaemon {
    static let defaultPairingTimeout = Double(PairingFormat.timeoutSeconds)

    static func pairingTimeout(_ seconds: Double?) throws(ProtocolError) -> Duration {
        let seconds = seconds ?? defaultPairingTimeout
        guard seconds.isFinite, seconds >= 5, seconds <= defaultPairingTimeout else {
            throw ProtocolError(.invalidParams, "timeout must be between 5 and 120 seconds")
        }
        return .milliseconds(Int64(seconds * 1000))
    }

    func checkNoPairing() throws(ProtocolError) -> BlueZContext {
        guard pairing.attempt == nil else {
            throw ProtocolError(.conflict, "a pairing is already under way on this laptop; try again when it ends")
        }
        guard let bluez = radio.bluez else {
            throw ProtocolError(.internal, "handoffd has no Bluetooth link for pairing")
        }
        return bluez
    }

    // MARK: Both sides

    /// `pair.confirm`: the user compared the numbers.
    func confirmPairing(_ params: PairConfirmParams, from caller: Caller) async throws(ProtocolError) {
        // Any connection of the attempt's uid may answer (the desktop agent, docs/desktop.md); no other uid.
        guard var attempt = pairing.attempt, attempt.name == params.pairing, attempt.uid == caller.uid else {
            throw ProtocolError(.notFound, "you have no pairing \"\(params.pairing)\" under way")
        }
        guard attempt.numberShown else {
            throw ProtocolError(.invalidParams, "there is no number to confirm yet: wait for the pairNumber event")
        }
        guard !attempt.answered else {
            throw ProtocolError(.invalidParams, "this pairing was already answered")
        }
        attempt.answered = true
        pairing.attempt = attempt
        // The uid's other askers (the agent's notification, another handoffctl) stop asking.
        clients.events?.pairing(
            .pairAnswered, PairAnsweredEvent(pairing: attempt.name, accept: params.accept), uid: attempt.uid, starter: nil)
        switch attempt.role {
        case .join(let inputs, _):
            inputs.yield(.answer(params.accept))
        case .offer(var offerer, let service, let bound, let mtu):
            guard params.accept else {
                await endPairing(params.pairing, .refused, "you refused: the numbers differ, or you declined")
                return
            }
            var generator = SystemRandomNumberGenerator()
            do throws(PairingError) {
                let account = try offerer.userConfirmed(using: &generator)
                attempt.role = .offer(offerer, service: service, bound: bound, mtu: mtu)
                pairing.attempt = attempt
                if let account { service?.send(account, session: offerer.advertisement.session, mtu: mtu) }
            } catch {
                throw ProtocolError(.invalidParams, "this pairing cannot be confirmed now (\(error))")
            }
        }
    }

    /// `pair.cancel`, a closed connection, or the daemon stopping.
    func cancelPairing(_ name: String, from caller: Caller) async throws(ProtocolError) {
        guard let attempt = pairing.attempt, attempt.name == name, attempt.uid == caller.uid else {
            throw ProtocolError(.notFound, "you have no pairing \"\(name)\" under way")
        }
        await endPairing(name, .cancelled, "cancelled")
    }

    /// Cancels the attempt of a connection that closed.
    func cancelPairing(of client: UInt64) async {
        guard let attempt = pairing.attempt, attempt.client == client else { return }
        await endPairing(attempt.name, .cancelled, "cancelled: the client left")
    }

    /// Ends the attempt from this side (refusal, timeout, cancellation, a bad message).
    func endPairing(_ name: String, _ code: PairingFailure, _ message: String, tellPeer: Bool = true) async {
        guard var attempt = pairing.attempt, attempt.name == name else { return }
        switch attempt.role {
        case .join(_, let abort):
            // The exchange task tells the offerer and reports; it ends when cancelled.
            attempt.endedBy = code
            pairing.attempt = attempt
            abort.set(code)
            attempt.task?.cancel()
        case .offer(var offerer, let service, let bound, let mtu):
            let failed = offerer.end(code)
            pairing.endedOffer = (name, code)
            if tellPeer, bound != nil {
                service?.send(failed, session: offerer.advertisement.session, mtu: mtu)
            }
            await finishPairing(name, failed: code.name, message)
        }
    }

    /// Tells the client how the attempt ended and takes everything down.
    func finishPairing(_ name: String, paired info: AccountInfo? = nil, failed code: String = "", _ message: String = "") async {
        guard let attempt = pairing.attempt, attempt.name == name else { return }
        pairing.attempt = nil
        if case .offer = attempt.role { attempt.task?.cancel() }
        if case .join(let inputs, _) = attempt.role { inputs.finish() }
        // Taken down before the client hears the end, so that a new offer can follow at once.
        if case .offer(_, let service, _, _) = attempt.role {
            pairing.onAir = nil
            let closing = Task { if let service { await service.close() } }
            pairing.closing = closing
            await updateAdvertisement()
            await closing.value
        }
        // The uid's other connections that were shown the number hear the end too, to withdraw it.
        let watchers = attempt.numberShown ? attempt.uid : nil
        if let info {
            logger.notice("pairing \(name): paired, account \(info.name)")
            sendPairingEnd(.paired, PairedEvent(pairing: name, account: info), to: attempt.client, watchers: watchers)
        } else {
            logger.notice("pairing \(name) failed: \(code): \(message)")
            sendPairingEnd(
                .pairFailed, PairFailedEvent(pairing: name, code: code, message: message), to: attempt.client,
                watchers: watchers)
        }
    }

    private func sendPairingEnd(_ event: EventName, _ data: some Encodable & Sendable, to client: UInt64, watchers: UInt32?) {
        if let watchers {
            clients.events?.pairing(event, data, uid: watchers, starter: client)
        } else {
            clients.events?.send(event, data, to: client)
        }
    }

    /// The attempt's `pairNumber`: to the connection that started it, and to every connection of its uid
    /// that asked for pairing events (docs/protocol.md, "Pairing events for other connections").
    func sendPairNumber(_ attempt: PairingState.Attempt) {
        guard let event = Self.numberEvent(attempt) else { return }
        clients.events?.pairing(.pairNumber, event, uid: attempt.uid, starter: attempt.client)
    }

    static func numberEvent(_ attempt: PairingState.Attempt) -> PairNumberEvent? {
        guard let number = attempt.number else { return nil }
        let role: PairingRole
        switch attempt.role {
        case .offer: role = .offer
        case .join: role = .join
        }
        return PairNumberEvent(pairing: attempt.name, number: number, role: role, account: attempt.account)
    }

    /// `hello` with or without `pairingEvents`: `enable` switches the connection's pairing events, and a
    /// connection that asks for them while an attempt of its uid shows a number not yet answered gets
    /// that `pairNumber` now (one atomic step on the daemon, so it is sent once).
    func watchPairing(_ caller: Caller, _ wanted: Bool, enable: @Sendable (Bool) -> Void) {
        enable(wanted)
        guard wanted, let attempt = pairing.attempt, attempt.uid == caller.uid, attempt.client != caller.client,
            !attempt.answered, let event = Self.numberEvent(attempt)
        else { return }
        clients.events?.send(.pairNumber, event, to: caller.client)
    }

    /// Remembers a pairing advertisement heard on the air.
    func hearPairing(_ advertisement: PairingAdvertisement, device: DBusObjectPath) {
        pairing.hear(advertisement, device: device, now: .now)
    }

    func key(named name: String) -> AccountKey? { accounts.keys[name] }

    static func localMessage(_ code: PairingFailure) -> String {
        switch code {
        case .malformed: "the other laptop sent a malformed message"
        case .unexpected: "the other laptop sent a message out of order"
        case .commitmentMismatch: "the offering laptop changed its key or nonce after committing: someone may be in the middle"
        case .confirmationFailed: "the other laptop does not share the agreed key: someone may be in the middle"
        case .refused: "you refused: the numbers differ, or you declined"
        case .timeout: "the pairing did not finish within the time allowed"
        case .busy: "the offering laptop is already pairing with another laptop"
        case .cancelled: "cancelled"
        case .conflict: "the account could not be stored on the joining laptop"
        case .authenticationFailed: "the account did not open under the agreed key: someone may be in the middle"
        }
    }

    static func peerMessage(_ code: PairingFailure) -> String {
        switch code {
        case .refused: "the other laptop refused: the numbers differ, or its user declined"
        case .timeout: "the other laptop gave up: its time ran out"
        case .cancelled: "the other laptop cancelled the pairing"
        case .busy: "the offering laptop is already pairing with another laptop"
        case .conflict: "the joining laptop could not store the account (the name is taken, or it has this key already)"
        default: "the other laptop ended the pairing: \(localMessage(code))"
        }
    }
}
