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

/// Pairing, the joining side (docs/pairing.md, sections 2 and 5): `pair.join` and its exchange.
extension HandoffDaemon {
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
            name: name, client: caller.client, uid: caller.uid, role: .join(inputs: continuation, abort: abort),
            account: params.name)
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
                await offerFailed(heard.advertisement)
                // Discovery runs meanwhile, so that a newer offer can be heard.
                do { try await Task.sleep(for: .milliseconds(300)) } catch { return .failed(nil, "") }
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

    nonisolated func sendOrFail(_ link: PairingJoinLink, _ message: [UInt8]) async throws(PairingError) {
        do { try await link.send(message) } catch let error as PairingError { throw error } catch {
            throw PairingError(.cancelled, fromPeer: true)
        }
    }

    /// How long one attempt to connect to an offer lasts; an offer is forgotten after `attemptsPerOffer`
    /// failed attempts. Between attempts discovery runs, so that a newer offer can be heard and tried first.
    static let connectAttempt: Duration = .seconds(2)
    static let attemptsPerOffer = 3

    func newestOffer(_ bluez: BlueZContext) -> PairingState.Heard? {
        pairing.newest(now: .now) { bluez.manager.device($0) != nil }
    }

    func offerFailed(_ advertisement: PairingAdvertisement) {
        guard let index = pairing.heard.firstIndex(where: { $0.advertisement == advertisement }) else { return }
        pairing.heard[index].failures += 1
        if pairing.heard[index].failures >= Self.attemptsPerOffer { pairing.heard.remove(at: index) }
    }

    func log(_ text: String) { logger.info("\(text)") }

    func showNumber(_ name: String, _ number: PairingNumber) {
        guard var attempt = pairing.attempt, attempt.name == name else { return }
        attempt.number = number.description
        pairing.attempt = attempt
        sendPairNumber(attempt)
    }

    /// Stores the received account (J), owned by `uid`.
    func storePaired(_ key: AccountKey, name: String, uid: UInt32) async throws(ProtocolError) -> AccountInfo {
        let renamed: AccountKey
        do { renamed = try key.renamed(to: name) } catch { throw ProtocolError(.invalidParams, "name: \(error)") }
        try accounts.addPaired(renamed, owner: uid)
        logger.notice("account \(renamed.name) (\(renamed.id)) received by pairing for uid \(uid)")
        accountsChanged()
        await updateAdvertisement()
        return AccountInfo(name: renamed.name, fingerprint: renamed.id.description, owner: uid)
    }

    func joinEnded(_ name: String, _ outcome: JoinOutcome?) async {
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
}
