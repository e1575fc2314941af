import Foundation
import Glibc
import HandoffCore
import NIOCore
import NIOPosix
import Synchronization
import Testing

@testable import HandoffDaemon

/// Two `StreamRelay`s over the local stand-in (docs/continuation.md, sections 10.6 and 10.7), each with an
/// "app" on the other end of a socket pair; or one relay facing a test that plays the peer with HandoffCore.
@Suite struct StreamRelayTests {
    typealias App = NIOAsyncChannel<ByteBuffer, ByteBuffer>
    static let group = MultiThreadedEventLoopGroup.singleton
    static let account = try! AccountKey(name: "relay", secret: Array(0..<32))
    static let stranger = try! AccountKey(name: "other", secret: [UInt8](repeating: 0xB0, count: 32))
    static let epoch = Epoch(index: 2_900_000, length: 600)
    static let tag: [UInt8] = [0xA1, 0xB2, 0xC3, 0xD4]
    static let nonce = [UInt8](repeating: 0x41, count: 16)

    static func keys(_ account: AccountKey = account, psm: UInt16) -> StreamKeys {
        StreamKeys(
            account: account, epoch: epoch, tag: tag, requestNonce: nonce,
            offer: try! StreamOffer(psm: psm, secret: [UInt8](repeating: 0xC0, count: 16)))
    }

    /// The relay's end and the app's end of a fresh socket pair, both driven by NIO.
    static func appPair() async throws -> (relay: App, app: App) {
        var fds: [Int32] = [0, 0]
        guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &fds) == 0 else {
            throw StreamTransportError.system(call: "socketpair", errno: errno)
        }
        return (try await StreamAppChannel.open(descriptor: fds[0], group: group),
                try await StreamAppChannel.open(descriptor: fds[1], group: group))
    }

    /// The app's part: writes `bytes` in 64 KiB pieces, each awaited (NIO fails writes still queued when the
    /// output closes), then closes its output (at once, or with `holdOutput` only after its input ended);
    /// reads everything to EOF.
    static func app(_ channel: App, writes bytes: [UInt8], readDelay: Duration = .zero, holdOutput: Bool = false)
        async -> [UInt8]
    {
        (try? await channel.executeThenClose { inbound, _ in
            let raw = channel.channel
            let inputEnded = Mutex(false)
            async let written: Void = {
                var offset = 0
                while offset < bytes.count {
                    let end = min(bytes.count, offset + 65_536)
                    try await raw.writeAndFlush(ByteBuffer(bytes: bytes[offset..<end]))
                    offset = end
                }
                while holdOutput && !inputEnded.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(10)) }
                try await raw.close(mode: .output)
            }()
            var received: [UInt8] = []
            for try await buffer in inbound {
                received += buffer.readableBytesView
                if readDelay > .zero { try await Task.sleep(for: readDelay) }
            }
            inputEnded.withLock { $0 = true }
            try? await written
            return received
        }) ?? []
    }

    struct Run {
        let origin: StreamRelay.Outcome
        let continuing: StreamRelay.Outcome
        let originReceived: [UInt8]
        let continuingReceived: [UInt8]
        let claims: Int
        /// How often the origin relay asked for its app's end.
        let originAppsTaken: Int
    }

    /// Both relays and both apps; the continuing side's keys may be a stranger's.
    static func run(
        toOrigin: [UInt8], toContinuing: [UInt8], continuingAccount: AccountKey = account,
        originReadDelay: Duration = .zero, continuingReadDelay: Duration = .zero
    ) async throws -> Run {
        let directory = try LocalStreamTransportTests.directory()
        defer { LocalStreamTransportTests.cleanUp(directory) }
        let listener = try await LocalStreamTransport(directory: directory, adapterAddress: LocalStreamTransportTests.origin)
            .listen()
        defer { listener.close() }
        let continuingTransport = LocalStreamTransport(
            directory: directory, adapterAddress: LocalStreamTransportTests.continuing)
        let claims = Mutex(0)
        let taken = Mutex(0)
        let originApps = try await appPair()
        let continuingApps = try await appPair()
        let psm = listener.psm
        async let originOutcome: StreamRelay.Outcome = {
            let link = try await StreamChannelIO.open(listener.accept(), group: group)
            let outcome = await StreamRelay(role: .origin, keys: keys(psm: psm)).run(
                link: link, app: { taken.withLock { $0 += 1 }; return originApps.relay }
            ) { claims.withLock { $0 += 1; return $0 == 1 } }
            // Not taken (or, wrongly, taken for a refused channel): the relay never ran it, so the test's app
            // reads no EOF unless it closes here.
            if taken.withLock({ $0 }) == 0 || outcome.isRefused { try? await originApps.relay.channel.close() }
            return outcome
        }()
        async let continuingOutcome: StreamRelay.Outcome = {
            let link = try await StreamChannelIO.open(
                continuingTransport.connect(to: LocalStreamTransportTests.peer(), psm: psm, timeout: .seconds(1)),
                group: group)
            let taken = Count()
            let outcome = await StreamRelay(role: .continuing, keys: keys(continuingAccount, psm: psm))
                .run(link: link, app: { taken.add(); return continuingApps.relay })
            // Not taken (the handshake failed): closed here, as for the origin.
            if taken.count == 0 { try? await continuingApps.relay.channel.close() }
            return outcome
        }()
        async let originReceived = app(originApps.app, writes: toContinuing, readDelay: originReadDelay)
        async let continuingReceived = app(continuingApps.app, writes: toOrigin, readDelay: continuingReadDelay)
        return Run(
            origin: try await originOutcome, continuing: try await continuingOutcome,
            originReceived: await originReceived, continuingReceived: await continuingReceived,
            claims: claims.withLock { $0 }, originAppsTaken: taken.withLock { $0 })
    }

    static func pattern(_ count: Int, _ seed: UInt8) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var value = seed
        for index in bytes.indices {
            value = value &* 29 &+ 7
            bytes[index] = value
        }
        return bytes
    }

    @Test(arguments: [(0, 0), (1, 1), (0, 1), (1, 0), (5000, 70_000)])
    func bytesCrossBothWaysAndBothEndCleanly(toOrigin: Int, toContinuing: Int) async throws {
        let up = Self.pattern(toOrigin, 1), down = Self.pattern(toContinuing, 2)
        let run = try await Self.run(toOrigin: up, toContinuing: down)
        #expect(run.origin == .finished && run.continuing == .finished)
        #expect(run.originReceived == up && run.continuingReceived == down)
        #expect(run.claims == 1 && run.originAppsTaken == 1)
    }

    @Test func tenMegabytesEachWayWithASlowReaderOnEitherSide() async throws {
        let up = Self.pattern(10 * 1024 * 1024, 3), down = Self.pattern(1024 * 1024, 4)
        let run = try await Self.run(
            toOrigin: up, toContinuing: down, originReadDelay: .microseconds(200), continuingReadDelay: .milliseconds(1))
        #expect(run.origin == .finished && run.continuing == .finished)
        let intact = run.originReceived == up && run.continuingReceived == down
        #expect(intact, "origin got \(run.originReceived.count) of \(up.count), continuing \(run.continuingReceived.count) of \(down.count)")
    }

    /// A device without the account key: the origin sends nothing, and the offer stays unused.
    @Test func aStrangerIsRefusedWithoutAByteAndTheOfferStaysUnused() async throws {
        let run = try await Self.run(toOrigin: [1, 2, 3], toContinuing: [4, 5, 6], continuingAccount: Self.stranger)
        #expect(run.origin == .refused(.stream(.handshakeFailed)))
        #expect(run.continuing == .failed(.stream(.truncated)))
        #expect(run.claims == 0)
        // The app's end was never asked for: a stranger's channel does not cost the app its stream.
        #expect(run.originAppsTaken == 0)
        #expect(run.originReceived.isEmpty && run.continuingReceived.isEmpty)
    }

    // MARK: One relay (the origin) against a peer played by the test

    /// The origin relay on a listener, its app, and the raw link of the test's continuing side.
    struct Origin {
        let outcome: Task<StreamRelay.Outcome, any Error>
        let app: Task<[UInt8], Never>
        let link: StreamChannelIO
        let keys: StreamKeys
        let directory: String
        let listener: any StreamTransportListener
        /// How often the relay asked for its app's end.
        let appsTaken: Count
    }

    final class Count: Sendable {
        private let value = Mutex(0)
        func add() { value.withLock { $0 += 1 } }
        var count: Int { value.withLock { $0 } }
    }

    /// The origin's app keeps its output open until its input ended, so the relay can still abort.
    static func origin(
        handshakeTimeout: Duration = .seconds(5), idleTimeout: Duration = .seconds(60), appWrites: [UInt8] = [],
        holdOutput: Bool = true, appComes: Bool = true, claim: @escaping @Sendable () -> Bool = { true },
        reordered: (@Sendable (Int) -> Void)? = nil, sendUnit: Int = StreamFormat.maximumFrameLength
    ) async throws -> Origin {
        let directory = try LocalStreamTransportTests.directory()
        let listener = try await LocalStreamTransport(
            directory: directory, adapterAddress: LocalStreamTransportTests.origin, sendUnit: sendUnit
        ).listen()
        let keys = keys(psm: listener.psm)
        let apps = try await appPair()
        var relay = StreamRelay(role: .origin, keys: keys)
        relay.handshakeTimeout = handshakeTimeout
        relay.idleTimeout = idleTimeout
        relay.reordered = reordered
        let taken = Count()
        let outcome = Task {
            let link = try await StreamChannelIO.open(listener.accept(), group: group)
            let outcome = await relay.run(
                link: link, app: { taken.add(); return appComes ? apps.relay : nil }, claim: claim)
            if !appComes || taken.count == 0 { try? await apps.relay.channel.close() }
            return outcome
        }
        let app = Task { await Self.app(apps.app, writes: appWrites, holdOutput: holdOutput) }
        let link = try await StreamChannelIO.open(
            LocalStreamTransport(directory: directory, adapterAddress: LocalStreamTransportTests.continuing)
                .connect(to: LocalStreamTransportTests.peer(), psm: listener.psm, timeout: .seconds(1)),
            group: group)
        return Origin(
            outcome: outcome, app: app, link: link, keys: keys, directory: directory, listener: listener, appsTaken: taken)
    }

    /// A tampered frame: the origin's app gets the bytes before it and then the error; the peer gets an abort
    /// with reason authenticationFailed.
    @Test func aTamperedFrameAbortsWithAClearErrorOnBothSides() async throws {
        let origin = try await Self.origin()
        defer { origin.listener.close(); LocalStreamTransportTests.cleanUp(origin.directory) }
        var sealer = origin.keys.sealer(for: .continuing)
        var opener = origin.keys.opener(for: .continuing)
        let peerError: StreamError? = try await origin.link.channel.executeThenClose { inbound, _ in
            let bytes = try sealer.hello() + sealer.seal([1, 2, 3])
            var tampered = try sealer.seal([9, 9, 9])
            tampered[5] ^= 0x01
            try await StreamChannelIO.send(bytes, sendUnit: 2048, on: origin.link.channel.channel)
            try await StreamChannelIO.send(tampered, sendUnit: 2048, on: origin.link.channel.channel)
            do {
                for try await buffer in inbound {
                    opener.append(buffer.readableBytesView)
                    while try opener.next() != nil {}
                }
                try opener.finish()
                return nil
            } catch let error as StreamError { return error }
        }
        #expect(try await origin.outcome.value == .failed(.stream(.authenticationFailed(frame: 2))))
        #expect(peerError == .peerAborted(.authenticationFailed))
        #expect(await origin.app.value == [1, 2, 3])
    }

    /// The link cut in the middle of a frame (out of range) after the origin's direction ended cleanly: the
    /// app got what arrived, and the error is `truncated`, never a clean end.
    @Test func aCutLinkIsTruncatedNeverACleanEnd() async throws {
        let origin = try await Self.origin(appWrites: [5], holdOutput: false)
        defer { origin.listener.close(); LocalStreamTransportTests.cleanUp(origin.directory) }
        var sealer = origin.keys.sealer(for: .continuing)
        var opener = origin.keys.opener(for: .continuing)
        let fromOrigin = try await origin.link.channel.executeThenClose { inbound, _ in
            var bytes = try sealer.hello() + sealer.seal([7, 7])
            bytes += try sealer.seal([8]).prefix(10)  // half a frame, then the link goes
            try await StreamChannelIO.send(bytes, sendUnit: 2048, on: origin.link.channel.channel)
            var received: [UInt8] = []
            for try await buffer in inbound {
                opener.append(buffer.readableBytesView)
                while let frame = try opener.next() { if case .data(let data) = frame { received += data } }
                if opener.isEnded { break }
            }
            return received
        }
        #expect(fromOrigin == [5] && opener.isEnded)
        let outcome = try await origin.outcome.value
        #expect(outcome == .failed(.stream(.truncated)))
        let app = await origin.app.value
        #expect(app == [7, 7])
    }

    /// A peer that connects and says nothing is dropped after the handshake timeout; the offer stays unused.
    @Test func aSilentPeerIsDroppedAtTheHandshakeTimeout() async throws {
        let origin = try await Self.origin(handshakeTimeout: .milliseconds(300))
        defer { origin.listener.close(); LocalStreamTransportTests.cleanUp(origin.directory) }
        let received = try await origin.link.channel.executeThenClose { inbound, _ in
            var count = 0
            for try await buffer in inbound { count += buffer.readableBytes }
            return count
        }
        #expect(try await origin.outcome.value == .refused(.handshakeTimedOut))
        #expect(received == 0)
    }

    /// Everything the test's peer reads from the origin until the link closes: the frames, then the error.
    static func readAll(_ inbound: NIOAsyncChannelInboundStream<ByteBuffer>, opener: inout StreamOpener) async throws
        -> (bytes: Int, error: StreamError?)
    {
        var count = 0
        do {
            for try await buffer in inbound {
                count += buffer.readableBytes
                opener.append(buffer.readableBytesView)
                while try opener.next() != nil {}
            }
            try opener.finish()
            return (count, nil)
        } catch let error as StreamError { return (count, error) }
    }

    /// An offer already used: a good hello on another channel is refused like a stranger's, without a byte.
    @Test func aHelloForAnOfferAlreadyUsedIsRefusedWithoutAByte() async throws {
        let origin = try await Self.origin(claim: { false })
        defer { origin.listener.close(); LocalStreamTransportTests.cleanUp(origin.directory) }
        var sealer = origin.keys.sealer(for: .continuing)
        var opener = origin.keys.opener(for: .continuing)
        let read = try await origin.link.channel.executeThenClose { inbound, _ in
            try await StreamChannelIO.send(try sealer.hello(), sendUnit: 2048, on: origin.link.channel.channel)
            return try await Self.readAll(inbound, opener: &opener)
        }
        #expect(try await origin.outcome.value == .refused(.stream(.handshakeFailed)))
        #expect(read.bytes == 0 && read.error == .truncated)
        #expect(origin.appsTaken.count == 0)
    }

    /// The app never came for its end (`StreamAppSocket`'s wait ended): the peer, which already holds the
    /// origin's hello, gets an abort `cancelled`, and the outcome is `appGone`.
    @Test func anAppThatNeverComesEndsTheStreamWithAnAbort() async throws {
        let origin = try await Self.origin(appComes: false)
        defer { origin.listener.close(); LocalStreamTransportTests.cleanUp(origin.directory) }
        var sealer = origin.keys.sealer(for: .continuing)
        var opener = origin.keys.opener(for: .continuing)
        let read = try await origin.link.channel.executeThenClose { inbound, _ in
            try await StreamChannelIO.send(try sealer.hello(), sendUnit: 2048, on: origin.link.channel.channel)
            return try await Self.readAll(inbound, opener: &opener)
        }
        #expect(try await origin.outcome.value == .failed(.appGone))
        #expect(read.error == .peerAborted(.cancelled))
        #expect(origin.appsTaken.count == 1)
    }

    /// Nothing crossing for the idle timeout ends the stream: the app's side reports it, the peer gets an abort.
    @Test func anIdleStreamEndsWithAnAbortToThePeer() async throws {
        let origin = try await Self.origin(idleTimeout: .milliseconds(300))
        defer { origin.listener.close(); LocalStreamTransportTests.cleanUp(origin.directory) }
        var sealer = origin.keys.sealer(for: .continuing)
        var opener = origin.keys.opener(for: .continuing)
        let read = try await origin.link.channel.executeThenClose { inbound, _ in
            try await StreamChannelIO.send(try sealer.hello() + sealer.seal([1]), sendUnit: 2048, on: origin.link.channel.channel)
            return try await Self.readAll(inbound, opener: &opener)
        }
        #expect(try await origin.outcome.value == .failed(.idleTimedOut))
        #expect(read.error == .peerAborted(.cancelled))
        #expect(await origin.app.value == [1])
    }

    /// Frames that come out of order, each in an SDU of its own (as Linux 6.1 delivers them when its receive
    /// queue overflows), reach the app in order and the stream finishes; the relay tells how many it held.
    @Test func framesOutOfOrderReachTheAppInOrder() async throws {
        let reordered = Mutex<[Int]>([])
        let origin = try await Self.origin(reordered: { count in reordered.withLock { $0.append(count) } })
        defer { origin.listener.close(); LocalStreamTransportTests.cleanUp(origin.directory) }
        var sealer = origin.keys.sealer(for: .continuing)
        var opener = origin.keys.opener(for: .continuing)
        let data = Self.pattern(100 * StreamFormat.maximumDataLength, 3)
        let hello = try sealer.hello()
        // Frames 1…101 (data, then the end): the first 30 pairs swapped, and frame 80 sent 31 frames late.
        var frames = Array(zip(1..., try sealer.sealFrames(data) + [try sealer.end()]))
        for index in stride(from: 0, to: 60, by: 2) { frames.swapAt(index, index + 1) }
        frames.insert(frames.remove(at: 69), at: 69 + 31)
        var (next, held, expected) = (1, Set<Int>(), 0)
        for (counter, _) in frames {
            if counter != next { held.insert(counter); expected += 1; continue }
            next += 1
            while held.remove(next) != nil { next += 1 }
        }
        let order = frames.map(\.1)
        let read = try await origin.link.channel.executeThenClose { inbound, _ in
            try await StreamChannelIO.send(hello, sendUnit: 2048, on: origin.link.channel.channel)
            for frame in order { try await StreamChannelIO.send(frame, sendUnit: 2048, on: origin.link.channel.channel) }
            return try await Self.readAll(inbound, opener: &opener)
        }
        #expect(read.error == nil)
        #expect(try await origin.outcome.value == .finished)
        let app = await origin.app.value
        #expect(app == data)
        #expect(expected == 61 && reordered.withLock { $0 } == [expected])
    }

    /// The relay puts each frame in an SDU of its own, so that the peer can reorder them: with the usual send
    /// unit, and with one below the largest frame (then the frames are shorter).
    @Test(arguments: [StreamFormat.maximumFrameLength, 1000])
    func eachFrameGoesInAnSDUOfItsOwn(sendUnit: Int) async throws {
        let data = Self.pattern(70_000, 5)
        let origin = try await Self.origin(appWrites: data, holdOutput: false, sendUnit: sendUnit)
        defer { origin.listener.close(); LocalStreamTransportTests.cleanUp(origin.directory) }
        var sealer = origin.keys.sealer(for: .continuing)
        var opener = origin.keys.opener(for: .continuing)
        let units = try await origin.link.channel.executeThenClose { inbound, _ in
            try await StreamChannelIO.send(try sealer.hello() + sealer.end(), sendUnit: 2048, on: origin.link.channel.channel)
            var units: [[UInt8]] = []
            for try await buffer in inbound { units.append(Array(buffer.readableBytesView)) }
            return units
        }
        var received: [UInt8] = []
        for unit in units {
            let length = Int(unit[0]) << 8 | Int(unit[1])
            #expect(unit.count == 2 + length, "an SDU of \(unit.count) bytes holds a frame of \(2 + length)")
            #expect(unit.count <= sendUnit)
            for frame in try opener.receive(unit: unit) { if case .data(let bytes) = frame { received += bytes } }
        }
        #expect(opener.isEnded && received == data)
        #expect(try await origin.outcome.value == .finished)
    }
}

extension StreamRelay.Outcome {
    var isRefused: Bool {
        if case .refused = self { return true }
        return false
    }
}
