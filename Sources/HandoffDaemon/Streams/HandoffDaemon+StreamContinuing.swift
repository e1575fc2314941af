#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol

/// The continuing side of continuation streams (docs/protocol.md, "Continuation streams"): `continue` with
/// `streams` sends `0x13`, connects to the offer's PSM, and sends `continued` with the app's socket once the
/// origin's hello opened; every failure before that is the continuation's `continueFailed`.
extension HandoffDaemon {
    /// How long the channel to the origin may take to connect.
    static let streamConnectTimeout: Duration = .seconds(5)

    /// Why a `continue` with `streams` cannot have one, known before anything goes over the air.
    func streamProblem(supportsStreams: Bool, uid: UInt32) -> ContinueError? {
        guard supportsStreams else {
            return ContinueError(.streamsUnsupported, "the origin app does not take continuation streams (its beacon lacks supportsStreams)")
        }
        guard streamNetwork != nil, settings.streamSocketDirectory != nil else {
            return ContinueError(.streamsUnsupported, "continuation streams are not available in this handoffd")
        }
        var budget = streams.budget
        do { try budget.take(for: uid) } catch { return ContinueError(.streamsUnsupported, error.description) }
        return nil
    }

    /// After the checks of a continuation with `streams`: connects to the offer and relays; `continued`
    /// follows once the origin's hello opened (`streamUp`).
    /// - Throws: the continuation's failure, when there is no offer, no slot, or the origin is gone.
    func openStream(
        _ name: String, _ pending: OutgoingContinuations.Pending, _ restored: ContinuedActivity, offer: StreamOffer?
    ) throws(ContinueError) {
        guard let offer else {
            throw ContinueError(
                .streamsUnsupported,
                "the origin device made no stream offer: its app does not take streams there, or it has no stream to spare")
        }
        guard let network = streamNetwork, let request = pending.requests.value, request.takesStreams else {
            throw ContinueError(.streamsUnsupported, "continuation streams are not available in this handoffd")
        }
        guard let device = nearby.entry(pending.nearbyID)?.device else {
            throw ContinueError(.outOfRange, "the origin device is no longer heard")
        }
        let (deadline, left) = (pending.deadline, pending.deadline - .now)
        guard left > .zero else { throw Self.streamTimedOut(pending) }
        let stream: (id: UInt64, handle: StreamHandle)
        do { stream = try streams.add(uid: pending.uid, client: pending.client) } catch {
            throw ContinueError(.streamsUnsupported, error.description)
        }
        var relay = StreamRelay(role: .continuing, keys: request.streamKeys(for: offer))
        relay.reordered = Self.reorderNotice(logger, what: "the stream of \(name)")
        let (uid, handle, continuationLink) = (pending.uid, stream.handle, link)
        outgoing.resume(name, pending)
        logger.info("opening the stream of \(name) on PSM 0x\(String(offer.psm, radix: 16))")
        outgoing.attach(Task { [weak self] in
            // The channel rides on the LE link of the exchange: it stays up while the stream lasts.
            await continuationLink?.holdLink(device)
            // The continue's timeout bounds the channel and the handshake too.
            let expiry = Task { [weak self] in
                try await Task.sleep(until: deadline)
                await self?.streamDeadlinePassed(name)
            }
            defer { expiry.cancel() }
            let result: Result<StreamRelay.Outcome, ContinueError> = await withTaskCancellationHandler {
                let link: StreamChannelIO
                do {
                    let peer = try await network.peer(device: device)
                    let channel = try await network.transport().connect(
                        to: peer, psm: offer.psm, timeout: min(Self.streamConnectTimeout, left))
                    link = try await StreamChannelIO.open(channel, group: .singletonMultiThreadedEventLoopGroup)
                } catch {
                    return .failure(Self.connectFailure(error))
                }
                handle.register(link.channel.channel)
                return .success(await relay.run(link: link) { [weak self] in
                    guard let socket = await self?.streamUp(name, stream.id, restored) else { return nil }
                    return await socket.accept(uid: uid, timeout: Self.streamAppWait)
                })
            } onCancel: {
                handle.cancel()
            }
            await continuationLink?.releaseLink(device)
            await self?.continuingStreamEnded(name, stream.id, result)
        }, to: name)
    }

    /// The continue's timeout passed before the origin's hello opened: `continueFailed` with `timeout`, and the
    /// stream's channel closes (its relay then ends and gives the slot back). Nothing once `continued` went.
    private func streamDeadlinePassed(_ name: String) {
        guard let pending = outgoing.finish(name) else { return }
        fail(name, pending, Self.streamTimedOut(pending))
        pending.task?.cancel()
    }

    static func streamTimedOut(_ pending: OutgoingContinuations.Pending) -> ContinueError {
        ContinueError(.timeout, "the stream to the origin device was not open within the continue's timeout of \(Int(pending.seconds)) s")
    }

    /// The origin's hello opened: the app's socket, and `continued` with it; nil when the continuation was
    /// cancelled meanwhile (its `continueFailed` went) or no socket could be made.
    private func streamUp(_ name: String, _ id: UInt64, _ restored: ContinuedActivity) async -> StreamAppSocket? {
        guard let pending = outgoing.finish(name), let stream = streams.open[id] else { return nil }
        guard let socket = await makeStreamSocket(handle: stream.handle) else {
            fail(name, pending, ContinueError(.streamsUnsupported, "handoffd could not make the stream's socket"))
            return nil
        }
        deliver(name, pending, restored, stream: StreamSocket(path: socket.path))
        return socket
    }

    /// The stream's relay ended (or never began): its slot goes back, and a continuation still waiting for
    /// its stream fails.
    private func continuingStreamEnded(_ name: String, _ id: UInt64, _ result: Result<StreamRelay.Outcome, ContinueError>) {
        streamEnded(id, try? result.get(), what: "stream of \(name)")
        guard let pending = outgoing.finish(name) else { return }
        switch result {
        case .failure(let error): fail(name, pending, error)
        case .success(let outcome): fail(name, pending, Self.handshakeFailure(outcome))
        }
    }

    /// A channel that could not be opened.
    static func connectFailure(_ error: any Error) -> ContinueError {
        if let error = error as? StreamTransportError, error == .noBluetooth {
            return ContinueError(.streamsUnsupported, error.description)
        }
        return ContinueError(.outOfRange, "the stream channel to the origin device could not be opened: \(error)")
    }

    /// A relay that ended before the origin's hello opened.
    static func handshakeFailure(_ outcome: StreamRelay.Outcome) -> ContinueError {
        switch outcome {
        case .failed(.handshakeTimedOut):
            ContinueError(.timeout, "the origin device did not answer the stream handshake within 5 s")
        case .failed(.stream(.handshakeFailed)):
            ContinueError(.rejected, "the stream handshake failed: the origin device does not hold this stream's keys")
        case .failed(let error), .refused(let error):
            ContinueError(.outOfRange, "the stream channel closed before its handshake: \(error)")
        case .finished:
            ContinueError(.outOfRange, "the stream channel closed before its handshake")
        }
    }
}
