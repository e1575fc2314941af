#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol
import Logging
import NIOCore
import NIOPosix

/// The origin's side of continuation streams (docs/continuation.md, sections 10.2 and 10.6; docs/protocol.md,
/// "Continuation streams"): an offer for a `0x13` request of an activity published with `supportsStreams`,
/// the channel's handshake, then the app's end through a `StreamAppSocket` and `streamOpened`.
extension HandoffDaemon {
    /// How long an app has to connect to its stream's socket.
    static let streamAppWait: Duration = .seconds(30)

    /// Sets how streams reach the system (handoffd: `BlueZStreamNetwork`); without one no offer is made.
    func use(streamNetwork: any StreamNetwork) { self.streamNetwork = streamNetwork }

    /// An offer for a request that takes streams, listening until a channel takes it or `StreamOfferServer.
    /// lifetime` passes; nil (the response then carries none) when the limits are reached or the transport
    /// cannot listen, which the log says.
    func offerStream(for activity: LocalActivity, accepted: ContinuationServer.Accepted) async -> StreamOffer? {
        guard let network = streamNetwork, settings.streamSocketDirectory != nil else {
            logger.notice("no stream offer for \(activity.id): streams are not available in this handoffd")
            return nil
        }
        let stream: (id: UInt64, handle: StreamHandle)
        do {
            stream = try streams.add(uid: activity.uid, client: activity.client)
        } catch {
            logger.notice("no stream offer for \(activity.id): \(error)")
            return nil
        }
        let offer: StreamOffer
        let listener: any StreamTransportListener
        do {
            listener = try await network.transport().listen()
            offer = try StreamOffer(psm: listener.psm)
        } catch {
            streams.remove(stream.id)
            logger.error("no stream offer for \(activity.id): \(error)")
            return nil
        }
        var relay = StreamRelay(role: .origin, keys: accepted.streamKeys(for: offer))
        relay.reordered = Self.reorderNotice(logger, what: "the stream for \(activity.id)")
        let server = StreamOfferServer(listener: listener, relay: relay, handle: stream.handle)
        let (id, uid, requester, logger) = (stream.id, activity.uid, accepted.requester.description, logger)
        logger.info("offering a stream for \(activity.id) on PSM 0x\(String(listener.psm, radix: 16)) to device \(requester)")
        Task { [weak self] in
            let outcome = await server.run(
                app: { [weak self] in
                    guard let socket = await self?.openStreamSocket(stream.id, activity: activity.id, by: requester)
                    else { return nil }
                    return await socket.accept(uid: uid, timeout: Self.streamAppWait)
                },
                refused: { logger.notice("stream channel for \(activity.id) refused: \($0)") })
            await self?.streamEnded(id, outcome, what: "stream for \(activity.id)")
        }
        return offer
    }

    /// After the handshake on the origin: the app's socket, told to the connection that published the
    /// activity (`streamOpened`); nil when that connection is gone or the stream was cancelled.
    private func openStreamSocket(_ id: UInt64, activity: String, by device: String) async -> StreamAppSocket? {
        guard let stream = streams.open[id], !stream.handle.isCancelled, clients[stream.client] != nil,
            let socket = await makeStreamSocket(handle: stream.handle)
        else { return nil }
        logger.info("stream for \(activity) opened by device \(device)")
        clients.events?.send(
            .streamOpened, StreamOpenedEvent(id: activity, path: socket.path, byDevice: device), to: stream.client)
        return socket
    }

    /// A fresh app socket in `[socket] path`'s directory, closed with the stream.
    func makeStreamSocket(handle: StreamHandle) async -> StreamAppSocket? {
        guard let directory = settings.streamSocketDirectory else { return nil }
        do {
            let socket = try await StreamAppSocket.listen(in: directory, group: MultiThreadedEventLoopGroup.singleton)
            handle.register { socket.close() }
            return socket
        } catch {
            logger.error("no socket for a stream's app in \(directory): \(error)")
            return nil
        }
    }

    /// A stream's relay (or its offer) ended: its slot goes back.
    func streamEnded(_ id: UInt64, _ outcome: StreamRelay.Outcome?, what: String) {
        streams.remove(id)
        switch outcome {
        case nil: logger.info("\(what): no channel took the offer")
        case .finished: logger.info("\(what) finished")
        case .failed(let error), .refused(let error): logger.notice("\(what) failed: \(error)")
        }
    }

    /// The log line for frames that came out of order and were put back (docs/continuation.md 10.5).
    static func reorderNotice(_ logger: Logger, what: String) -> @Sendable (Int) -> Void {
        { count in
            logger.notice(
                "\(what): \(count) frame(s) came out of order from the channel and were put back in order (Linux 6.1 reorders SDUs when its receive queue overflows)")
        }
    }
}
