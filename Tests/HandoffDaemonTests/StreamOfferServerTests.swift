import Foundation
import Glibc
import HandoffCore
import NIOCore
import Synchronization
import Testing

@testable import HandoffDaemon

/// The origin's offer (`StreamOfferServer`, docs/continuation.md, section 10.6 "In handoffd"): channels
/// accepted for its lifetime, each one's handshake run at once, one claim only; over the stand-in, with a
/// continuing `StreamRelay` as the peer.
@Suite(.timeLimit(.minutes(1))) struct StreamOfferServerTests {
    typealias T = StreamRelayTests

    struct Offer {
        let directory: String
        let server: StreamOfferServer
        let continuing: LocalStreamTransport
        var psm: UInt16 { server.listener.psm }

        func connect() async throws -> StreamChannelIO {
            try await StreamChannelIO.open(
                continuing.connect(to: LocalStreamTransportTests.peer(), psm: psm, timeout: .seconds(1)), group: T.group)
        }
    }

    /// An offer listening in a fresh directory; `handshakeTimeout` long enough that a silent stranger would
    /// hold up anyone who waited for it.
    static func offer(lifetime: Duration = .seconds(30), handshakeTimeout: Duration = .seconds(60)) async throws -> Offer {
        let directory = try LocalStreamTransportTests.directory()
        let listener = try await LocalStreamTransport(directory: directory, adapterAddress: LocalStreamTransportTests.origin)
            .listen()
        var relay = StreamRelay(role: .origin, keys: T.keys(psm: listener.psm))
        relay.handshakeTimeout = handshakeTimeout
        var server = StreamOfferServer(listener: listener, relay: relay, handle: StreamHandle())
        server.lifetime = lifetime
        return Offer(
            directory: directory, server: server,
            continuing: LocalStreamTransport(directory: directory, adapterAddress: LocalStreamTransportTests.continuing))
    }

    /// The continuing side of one stream: its relay, with an app that writes `bytes` and reads to EOF.
    static func continuingStream(_ link: StreamChannelIO, psm: UInt16, writes bytes: [UInt8]) async throws
        -> (outcome: StreamRelay.Outcome, received: [UInt8])
    {
        let apps = try await T.appPair()
        let taken = T.Count()
        async let received = T.app(apps.app, writes: bytes)
        let outcome = await StreamRelay(role: .continuing, keys: T.keys(psm: psm))
            .run(link: link, app: { taken.add(); return apps.relay })
        if taken.count == 0 { try? await apps.relay.channel.close() }
        return (outcome, await received)
    }

    /// A stranger connects first and says nothing: the real peer's stream opens and finishes while the
    /// stranger still holds its channel (the stranger reads no byte); the offer's outcome is the stream's.
    @Test func aStrangerHoldingAChannelOpenDelaysNobody() async throws {
        let offer = try await Self.offer()
        defer { LocalStreamTransportTests.cleanUp(offer.directory) }
        let stranger = try await offer.continuing.connect(
            to: LocalStreamTransportTests.peer(), psm: offer.psm, timeout: .seconds(1))
        let originApps = try await T.appPair()
        let appsTaken = T.Count()
        let server = Task {
            await offer.server.run(app: { appsTaken.add(); return originApps.relay }, refused: { _ in })
        }
        async let originReceived = T.app(originApps.app, writes: [9, 8, 7])
        let continuing = try await Self.continuingStream(offer.connect(), psm: offer.psm, writes: [1, 2])
        #expect(continuing.outcome == .finished)
        #expect(continuing.received == [9, 8, 7])
        #expect(await originReceived == [1, 2])
        // Only now does the stranger go; it read nothing.
        var byte: [UInt8] = [0]
        let flags = fcntl(stranger.descriptor.rawValue, F_GETFL)
        _ = fcntl(stranger.descriptor.rawValue, F_SETFL, flags | O_NONBLOCK)
        let n = byte.withUnsafeMutableBytes { Glibc.read(stranger.descriptor.rawValue, $0.baseAddress, 1) }
        #expect(n < 0 && errno == EAGAIN, "the stranger read \(n) bytes")
        try stranger.descriptor.close()
        #expect(await server.value == .finished)
        #expect(appsTaken.count == 1)
    }

    /// Nobody comes: after the lifetime the offer ends with no outcome, its PSM is free, and connecting is
    /// refused.
    @Test func anUnusedOfferExpiresAfterItsLifetime() async throws {
        let offer = try await Self.offer(lifetime: .milliseconds(300))
        defer { LocalStreamTransportTests.cleanUp(offer.directory) }
        // A guard against a hang (20 s, far beyond the lifetime): it closes the listener itself.
        let guarded = Mutex(false)
        let hangGuard = Task {
            try await Task.sleep(for: .seconds(20))
            guarded.withLock { $0 = true }
            offer.server.listener.close()
        }
        let outcome = await offer.server.run(app: { nil }, refused: { _ in })
        hangGuard.cancel()
        #expect(!guarded.withLock { $0 }, "the offer did not end after its lifetime")
        #expect(outcome == nil)
        await #expect(throws: StreamTransportError.refused(psm: offer.psm)) { _ = try await offer.connect() }
    }

    /// Two channels with good hellos, both accepted before either is answered: the first hello takes the
    /// offer and gets the stream; the other gets no hello (closed without a byte: `truncated`), and the
    /// origin's app is asked for once.
    @Test func anOfferIsClaimedOnce() async throws {
        let offer = try await Self.offer()
        defer { LocalStreamTransportTests.cleanUp(offer.directory) }
        let first = try await offer.connect()
        let second = try await offer.connect()
        let originApps = try await T.appPair()
        let appsTaken = T.Count()
        let refusals = Mutex<[StreamRelayError]>([])
        let server = Task {
            await offer.server.run(
                // A second call gets no app (one app channel cannot serve two relays).
                app: { appsTaken.add(); return appsTaken.count == 1 ? originApps.relay : nil },
                refused: { error in refusals.withLock { $0.append(error) } })
        }
        async let originReceived = T.app(originApps.app, writes: [5])
        async let one = Self.continuingStream(first, psm: offer.psm, writes: [1])
        async let two = Self.continuingStream(second, psm: offer.psm, writes: [2])
        let outcomes = try await [one, two]
        let finished = outcomes.filter { $0.outcome == .finished }
        #expect(finished.count == 1 && finished.first?.received == [5])
        #expect(outcomes.contains { $0.outcome == .failed(.stream(.truncated)) && $0.received.isEmpty })
        #expect(await originReceived.count == 1)
        #expect(await server.value == .finished)
        #expect(appsTaken.count == 1)
        #expect(refusals.withLock { $0 } == [.stream(.handshakeFailed)])
    }
}
