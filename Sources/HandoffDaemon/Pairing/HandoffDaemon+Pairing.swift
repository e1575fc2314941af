import BlueZ
import DBus
import Foundation
import Synchronization
import HandoffCore
import HandoffProtocol

/// Pairing over Bluetooth LE (docs/pairing.md; the socket side in docs/protocol.md, "Pairing"):
/// `pair.offer` on the laptop that gives an account, `pair.join` on the one that receives it.
/// One attempt at a time per daemon. Nothing secret is logged: not the account key, not the
/// agreed keys, not the number.
extension HandoffDaemon {
    static let defaultPairingTimeout = Double(PairingFormat.timeoutSeconds)

    private static func pairingTimeout(_ seconds: Double?) throws(ProtocolError) -> Duration {
        let seconds = seconds ?? defaultPairingTimeout
        guard seconds.isFinite, seconds >= 5, seconds <= defaultPairingTimeout else {
            throw ProtocolError(.invalidParams, "timeout must be between 5 and 120 seconds")
        }
        return .milliseconds(Int64(seconds * 1000))
    }

    private func checkNoPairing() throws(ProtocolError) -> BlueZContext {
        guard pairing.attempt == nil else {
            throw ProtocolError(.conflict, "a pairing is already under way on this laptop; try again when it ends")
        }
        guard let bluez = radio.bluez else {
            throw ProtocolError(.internal, "handoffd has no Bluetooth link for pairing")
        }
        return bluez
    }

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
            role: .offer(offerer, service: nil, bound: nil, mtu: ContinuationFormat.minimumMTU))
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
            if let number {
                attempt.numberShown = true
                clients.events?.send(.pairNumber, PairNumberEvent(pairing: name, number: number.description), to: attempt.client)
            }
            pairing.attempt = attempt
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

    // MARK: Joining side

    /// `pair.join`: `answer` gets the result before any event of the attempt can be queued.
    func joinPairing(
        _ params: PairJoinParams, from caller: Caller, answer: @Sendable (PairStarted) -> Void
    ) throws(ProtocolError) {
        let timeout = try Self.pairingTimeout(params.timeout)
        let bluez = try checkNoPairing()
        if let wanted = params.name {
            do { try AccountKey.validate(name: wanted) } catch {
                throw ProtocolError(.invalidParams, "name: \(error)")
            }
            guard accounts.keys[wanted] == nil else {
                throw ProtocolError(.conflict, "an account named \"\(wanted)\" already exists")
            }
        }
        let name = pairing.nextName()
        let (inputs, continuation) = AsyncStream<PairingState.JoinInput>.makeStream()
        let abort = PairingState.Abort()
        pairing.attempt = PairingState.Attempt(
            name: name, client: caller.client, uid: caller.uid, role: .join(inputs: continuation, abort: abort))
        answer(PairStarted(pairing: name))
        logger.notice("pairing \(name): uid \(caller.uid) is looking for a laptop that offers an account")
        let wantedName = params.name
        let uid = caller.uid
        pairing.attempt?.task = Task { [weak self] in
            guard let self else { return }
            let outcome = await withTaskGroup(of: JoinOutcome?.self) { group in
                group.addTask {
                    await self.runJoin(
                        name, bluez: bluez, inputs: inputs, feed: continuation, wantedName: wantedName, uid: uid,
                        abort: abort)
                }
                group.addTask {
                    try? await Task.sleep(for: timeout)
                    guard !Task.isCancelled else { return nil }
                    abort.set(.timeout)
                    return .failed(.timeout, "no pairing finished within \(timeout.components.seconds) s")
                }
                let first = await group.next() ?? nil
                group.cancelAll()
                return first
            }
            await self.joinEnded(name, outcome)
        }
    }

    enum JoinOutcome: Sendable {
        case paired(AccountInfo)
        case failed(PairingFailure?, String)
    }

    /// The joining side's whole exchange (docs/pairing.md, section 5).
    nonisolated func runJoin(
        _ name: String, bluez: BlueZContext, inputs: AsyncStream<PairingState.JoinInput>,
        feed: AsyncStream<PairingState.JoinInput>.Continuation, wantedName: String?, uid: UInt32,
        abort: PairingState.Abort
    ) async -> JoinOutcome {
        // 1. An offer, and a link to it: the newest offer heard whose device bluetoothd still has; one
        //    that cannot be reached is forgotten and the next newest tried.
        let radio = self.radio
        var connected: (heard: PairingState.Heard, link: PairingJoinLink)?
        while connected == nil {
            guard let heard = await newestOffer(bluez) else {
                do { try await Task.sleep(for: .milliseconds(200)) } catch { return .failed(nil, "") }
                continue
            }
            await log("pairing \(name): connecting to the offering laptop (\(heard.device))")
            let link = PairingJoinLink(bluez: bluez, device: heard.device)
            await radio.pauseDiscovery()
            do {
                try await link.open(
                    session: heard.advertisement.session, within: Self.connectAttempt,
                    // Straight into the exchange's inputs, in the order they arrived.
                    deliver: { message in feed.yield(.message(message)) },
                    lost: { feed.yield(.linkLost) })
                connected = (heard, link)
            } catch {
                Task {
                    await link.close()
                    await radio.resumeDiscovery()
                }
                if Task.isCancelled { return .failed(nil, "") }
                await log("pairing \(name): the offering laptop was not reached (\(error)); looking again")
                await forgetOffer(heard.advertisement)
            }
        }
        guard let (heard, link) = connected else { return .failed(nil, "") }
        let told = Mutex(false)
        defer {
            // Not cancelled with the exchange: the offerer is told (a timeout or a cancellation),
            // and the link must go whatever happened.
            let tellOfferer = !told.withLock { $0 }
            Task {
                if tellOfferer, let code = abort.code { try? await link.send(PairingFormat.failedMessage(code)) }
                await link.close()
                await radio.resumeDiscovery()
            }
        }
        var generator = SystemRandomNumberGenerator()
        var joiner = PairingJoiner(advertisement: heard.advertisement, using: &generator)

        /// Ends with `code`, telling the offerer (best effort).
        func fail(_ error: PairingError, _ message: String) async -> JoinOutcome {
            told.withLock { $0 = true }
            if !error.fromPeer { try? await link.send(PairingFormat.failedMessage(error.code)) }
            return .failed(error.code, message)
        }
        do {
            try await link.send(joiner.start)
        } catch let error as PairingError {
            return await fail(error, Self.peerMessage(error.code))
        } catch {
            return .failed(nil, "could not write to the offering laptop: \(error)")
        }
        for await input in inputs {
            do throws(PairingError) {
                switch input {
                case .linkLost:
                    told.withLock { $0 = true }
                    return .failed(nil, "the link to the offering laptop dropped")
                case .answer(let yes):
                    guard yes else {
                        return await fail(PairingError(.refused), "you refused: the numbers differ, or you declined")
                    }
                    let confirm = try joiner.confirm()
                    try await sendOrFail(link, confirm)
                case .message(let message):
                    if let code = PairingFormat.failure(in: message) {
                        told.withLock { $0 = true }
                        return .failed(code, Self.peerMessage(code))
                    }
                    switch message.count >= 2 ? message[1] : 0 {
                    case PairingFormat.MessageType.commit.rawValue:
                        try await sendOrFail(link, try joiner.receiveCommit(message))
                    case PairingFormat.MessageType.nonceO.rawValue:
                        let number = try joiner.receiveNonce(message)
                        await showNumber(name, number)
                    case PairingFormat.MessageType.account.rawValue:
                        let (key, done) = try joiner.receiveAccount(message)
                        let stored: AccountInfo
                        do {
                            stored = try await storePaired(key, name: wantedName ?? key.name, uid: uid)
                        } catch {
                            _ = await fail(PairingError(.conflict), "")
                            return .failed(.conflict, "the account could not be stored here: \(error.message)")
                        }
                        told.withLock { $0 = true }
                        try? await link.send(done)
                        return .paired(stored)
                    default:
                        throw PairingError(.unexpected)
                    }
                }
            } catch {
                return await fail(error, error.fromPeer ? Self.peerMessage(error.code) : Self.localMessage(error.code))
            }
        }
        return .failed(nil, "")
    }

    private nonisolated func sendOrFail(_ link: PairingJoinLink, _ message: [UInt8]) async throws(PairingError) {
        do { try await link.send(message) } catch let error as PairingError { throw error } catch {
            throw PairingError(.cancelled, fromPeer: true)
        }
    }

    /// How long the joining side tries to connect to one offer before it looks for another.
    static let connectAttempt: Duration = .seconds(8)

    private func newestOffer(_ bluez: BlueZContext) -> PairingState.Heard? {
        pairing.newest(now: .now) { bluez.manager.device($0) != nil }
    }

    private func forgetOffer(_ advertisement: PairingAdvertisement) {
        pairing.heard.removeAll { $0.advertisement == advertisement }
    }

    private func log(_ text: String) { logger.info("\(text)") }

    private func showNumber(_ name: String, _ number: PairingNumber) {
        guard var attempt = pairing.attempt, attempt.name == name else { return }
        attempt.numberShown = true
        pairing.attempt = attempt
        clients.events?.send(.pairNumber, PairNumberEvent(pairing: name, number: number.description), to: attempt.client)
    }

    /// Stores the received account (J), owned by `uid`.
    private func storePaired(_ key: AccountKey, name: String, uid: UInt32) async throws(ProtocolError) -> AccountInfo {
        let renamed: AccountKey
        do { renamed = try key.renamed(to: name) } catch { throw ProtocolError(.invalidParams, "name: \(error)") }
        try accounts.addPaired(renamed, owner: uid)
        logger.notice("account \(renamed.name) (\(renamed.id)) received by pairing for uid \(uid)")
        accountsChanged()
        await updateAdvertisement()
        return AccountInfo(name: renamed.name, fingerprint: renamed.id.description, owner: uid)
    }

    private func joinEnded(_ name: String, _ outcome: JoinOutcome?) async {
        guard let attempt = pairing.attempt, attempt.name == name else { return }
        switch outcome {
        case .paired(let info):
            await finishPairing(name, paired: info)
        case .failed(let code, let message):
            if let ended = attempt.endedBy {
                await finishPairing(name, failed: ended.name, Self.localMessage(ended))
            } else if let code {
                await finishPairing(name, failed: code.name, message.isEmpty ? Self.localMessage(code) : message)
            } else {
                await finishPairing(name, failed: "disconnected", message.isEmpty ? "the offering laptop was not reached" : message)
            }
        case nil:
            await finishPairing(name, failed: (attempt.endedBy ?? .cancelled).name, Self.localMessage(attempt.endedBy ?? .cancelled))
        }
    }

    // MARK: Both sides

    /// `pair.confirm`: the user compared the numbers.
    func confirmPairing(_ params: PairConfirmParams, from caller: Caller) async throws(ProtocolError) {
        guard var attempt = pairing.attempt, attempt.name == params.pairing, attempt.client == caller.client else {
            throw ProtocolError(.notFound, "this connection has no pairing \"\(params.pairing)\" under way")
        }
        guard attempt.numberShown else {
            throw ProtocolError(.invalidParams, "there is no number to confirm yet: wait for the pairNumber event")
        }
        guard !attempt.answered else {
            throw ProtocolError(.invalidParams, "this pairing was already answered")
        }
        attempt.answered = true
        pairing.attempt = attempt
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
        guard let attempt = pairing.attempt, attempt.name == name, attempt.client == caller.client else {
            throw ProtocolError(.notFound, "this connection has no pairing \"\(name)\" under way")
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
    private func finishPairing(_ name: String, paired info: AccountInfo? = nil, failed code: String = "", _ message: String = "") async {
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
        if let info {
            logger.notice("pairing \(name): paired, account \(info.name)")
            clients.events?.send(.paired, PairedEvent(pairing: name, account: info), to: attempt.client)
        } else {
            logger.notice("pairing \(name) failed: \(code): \(message)")
            clients.events?.send(.pairFailed, PairFailedEvent(pairing: name, code: code, message: message), to: attempt.client)
        }
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
