import HandoffProtocol

/// What `HandoffClient.pairingChanges()` reports: the pairing attempts of this user on this laptop,
/// whichever program started them (`handoffctl pair --offer` / `--join`), from the number on
/// (docs/protocol.md, "Pairing events for other connections"). The desktop agent shows them.
public enum PairingChange: Sendable, Hashable {
    /// Both laptops show this number; answer with `HandoffClient.answerPairing(_:accept:)`.
    case number(PairNumberEvent)
    /// The user answered, here or on another connection (the terminal): stop asking.
    case answered(PairAnsweredEvent)
    /// The attempt succeeded.
    case paired(PairedEvent)
    /// The attempt ended without pairing.
    case failed(PairFailedEvent)
    /// The client connected to handoffd again: attempts reported before may be gone (a restarted
    /// daemon). An attempt still waiting for an answer is reported again as `.number`.
    case reconnected

    /// The attempt this change is about; nil for `.reconnected`.
    public var pairing: String? {
        switch self {
        case .number(let event): event.pairing
        case .answered(let event): event.pairing
        case .paired(let event): event.pairing
        case .failed(let event): event.pairing
        case .reconnected: nil
        }
    }
}

extension ClientCore {
    func pairingChanges(keepingAlive owner: HandoffClient) -> AsyncStream<PairingChange> {
        let (stream, continuation) = AsyncStream.makeStream(of: PairingChange.self)
        let token = inner.withLock { state -> UInt64? in
            if case .closed = state.phase { return nil }
            let token = state.token()
            state.pairingSinks[token] = continuation
            return token
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { _ in
            _ = owner.core.inner.withLock { $0.pairingSinks.removeValue(forKey: token) }
        }
        return stream
    }

    func deliverPairing(_ change: PairingChange) {
        for sink in inner.withLock({ Array($0.pairingSinks.values) }) { sink.yield(change) }
    }
}

extension HandoffClient {
    // MARK: Pairing (the desktop side)

    /// The pairing attempts of this user, from the moment both laptops show the number until they end.
    /// Needs `Configuration.pairingEvents`; otherwise the stream stays silent. Connects if the client is
    /// not connected yet; ends when the client closes.
    public func pairingChanges() -> AsyncStream<PairingChange> {
        let stream = core.pairingChanges(keepingAlive: self)
        core.start()
        return stream
    }

    /// The user's answer to a pairing attempt's number (`pair.confirm`): true when the other laptop
    /// shows the same number, false to refuse.
    /// - Throws: `HandoffClientError` (`not-found`: no such attempt of this user; `invalid-params`:
    ///   already answered).
    public func answerPairing(_ pairing: String, accept: Bool) async throws {
        let (connection, _) = try await core.ready()
        _ = try await connection.request(
            .pairConfirm, PairConfirmParams(pairing: pairing, accept: accept), as: EmptyResult.self)
    }
}
