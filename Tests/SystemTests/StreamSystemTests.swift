#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import HandoffProtocol
import Testing

/// Continuation streams end to end (docs/protocol.md, "Continuation streams"): two real handoffds on the
/// simulated BlueZ, the streams over the local stand-in (`[streams] local_directory`), apps speaking the raw
/// socket protocol and reading and writing their stream sockets.
@Suite(.serialized) struct StreamSystemTests {
    /// Two laptops whose streams share one directory; A's and B's `[streams]` may add bounds.
    static func laptops(originStreams: String = "", continuingStreams: String = "") async throws -> TwoLaptops {
        let directory = FileManager.default.temporaryDirectory.path + "/streams-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return try await TwoLaptops(
            originSections: "[streams]\nlocal_directory = \"\(directory)\"\n\(originStreams)\n",
            continuingSections: "[streams]\nlocal_directory = \"\(directory)\"\n\(continuingStreams)\n")
    }

    /// A's app publishing with `supportsStreams` (or not), and B's app, which handles the type, seeing it.
    static func publish(_ laptops: TwoLaptops, supportsStreams: Bool = true) async throws
        -> (origin: WireClient, continuing: WireClient, nearbyID: String)
    {
        let origin = try await laptops.a.client()
        _ = try await origin.call(
            .publish, PublishParams(type: TwoLaptops.type, title: "Shared", supportsStreams: supportsStreams),
            as: PublishResult.self)
        let continuing = try await laptops.b.client(handles: [TwoLaptops.type])
        try await eventually(within: .seconds(15)) {
            try await continuing.call(.list, EmptyResult(), as: ListResult.self).activities.first?.supportsStreams
                == supportsStreams
        }
        let nearby = try await continuing.call(.list, EmptyResult(), as: ListResult.self).activities[0]
        return (origin, continuing, nearby.id)
    }

    /// `continue` with `streams`: the continuing app's end, or the failure's code and message.
    static func continueWithStream(_ client: WireClient, _ nearbyID: String) async throws
        -> Result<StreamAppEnd, ContinueError>
    {
        _ = try await client.call(.continue, ContinueParams(id: nearbyID, timeout: 10, streams: true), as: WillContinue.self)
        let (name, line) = try await client.event(among: [.continued, .continueFailed], timeout: .seconds(20))
        if name == .continueFailed { return .failure(ContinueError(try WireFormat.eventData(ContinueFailedEvent.self, from: line))) }
        let continued = try WireFormat.eventData(ContinuedEvent.self, from: line)
        guard let stream = continued.stream else { throw TestFailure("continued without a stream") }
        return .success(try StreamAppEnd(path: stream.path))
    }

    /// Both apps' ends of one stream: B continues, A's app takes `streamOpened`.
    static func open(_ origin: WireClient, _ continuing: WireClient, _ nearbyID: String) async throws
        -> (origin: StreamAppEnd, continuing: StreamAppEnd)
    {
        let continuingEnd = try await continueWithStream(continuing, nearbyID).get()
        let opened = try await origin.event(.streamOpened, as: StreamOpenedEvent.self, timeout: .seconds(10))
        #expect(opened.byDevice.count == 8)
        return (try StreamAppEnd(path: opened.path), continuingEnd)
    }

    static func pattern(_ count: Int, _ seed: UInt8) -> [UInt8] {
        var value = seed
        return (0..<count).map { _ in
            value = value &* 29 &+ 7
            return value
        }
    }

    /// Bytes both ways: 1 B, 0 B, then 10 MB to the origin and 1 MB back with a slow reader on either side;
    /// every stream ends cleanly on both sides, and each one's slot is given back (four streams one after the
    /// other under a bound of one per user).
    @Test func bytesCrossBothWaysAndEveryStreamEndsCleanly() async throws {
        let laptops = try await Self.laptops(originStreams: "max_per_user = 1")
        defer { Task { await laptops.stop() } }
        let (origin, continuing, nearbyID) = try await Self.publish(laptops)
        var streams = 0
        for (up, down, originDelay, continuingDelay) in [
            (1, 1, Duration.zero, Duration.zero), (0, 0, .zero, .zero),
            (10 * 1024 * 1024, 1024 * 1024, .microseconds(300), .milliseconds(2)),
        ] {
            let ends = try await Self.open(origin, continuing, nearbyID)
            let toOrigin = Self.pattern(up, 1), toContinuing = Self.pattern(down, 2)
            async let wroteUp = ends.continuing.write(toOrigin)
            async let wroteDown = ends.origin.write(toContinuing)
            async let atOrigin = ends.origin.readAll(delay: originDelay)
            async let atContinuing = ends.continuing.readAll(delay: continuingDelay)
            let (o, c) = await (atOrigin, atContinuing)
            let wrote = await (wroteUp, wroteDown)
            #expect(wrote.0 && wrote.1)
            #expect(o.error == nil && c.error == nil)
            #expect(o.bytes == toOrigin, "origin got \(o.bytes.count) of \(up)")
            #expect(c.bytes == toContinuing, "continuing got \(c.bytes.count) of \(down)")
            // A gives the slot back when its relay ended (max_per_user = 1 there): the next stream opens.
            streams += 1
            try await eventually { [streams] in laptops.a.log.components(separatedBy: " finished").count - 1 >= streams }
        }
    }

    /// `status` reports bluetoothd's `TemporaryTimeout` from the main.conf each handoffd reads (docs/protocol.md,
    /// status; `handoffctl doctor` warns from it): 120 where the file sets it, bluetoothd's 30 where it does not,
    /// nothing where the file cannot be read; a change shows at the next status.
    @Test func statusSaysHowLongBluetoothdKeepsTheOtherLaptopsDevice() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/mainconf-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let conf = directory + "/main.conf"
        try "[General]\nPrivacy = device\nTemporaryTimeout = 120\n".write(toFile: conf, atomically: true, encoding: .utf8)
        let laptops = try await TwoLaptops(originBluetoothSettings: #"bluetoothd_main_conf = "\#(conf)""#)
        defer { Task { await laptops.stop() } }
        let a = try await laptops.a.client(), b = try await laptops.b.client()
        let atA = try await a.call(.status, EmptyResult(), as: StatusResult.self)
        #expect(atA.bluetoothdTemporaryTimeout == 120 && atA.bluetoothdMainConf == conf)
        let atB = try await b.call(.status, EmptyResult(), as: StatusResult.self)
        #expect(atB.bluetoothdTemporaryTimeout == 30 && atB.bluetoothdMainConf?.hasSuffix("/main.conf") == true)
        try "[General]\nPrivacy = device\nTemporaryTimeout = 0\n".write(toFile: conf, atomically: true, encoding: .utf8)
        #expect(try await a.call(.status, EmptyResult(), as: StatusResult.self).bluetoothdTemporaryTimeout == 0)
        try FileManager.default.removeItem(atPath: conf)
        let gone = try await a.call(.status, EmptyResult(), as: StatusResult.self)
        #expect(gone.bluetoothdTemporaryTimeout == nil && gone.bluetoothdMainConf == nil)
    }

    /// The origin app does not take streams: `streams-unsupported` at once (the beacon says so), and the
    /// same continuation without `streams` still works.
    @Test func anOriginWithoutSupportsStreamsIsStreamsUnsupported() async throws {
        let laptops = try await Self.laptops()
        defer { Task { await laptops.stop() } }
        // A's app stays connected (its activity goes with its connection).
        let (origin, continuing, nearbyID) = try await Self.publish(laptops, supportsStreams: false)
        defer { withExtendedLifetime(origin) {} }
        let started = ContinuousClock.now
        let result: Result<StreamAppEnd, ContinueError>
        do { result = try await Self.continueWithStream(continuing, nearbyID) } catch {
            Issue.record("\(error); B's log:\n\(laptops.b.log.suffix(3000))")
            return
        }
        guard case .failure(let failed) = result else {
            Issue.record("a stream from an origin that does not take them")
            return
        }
        #expect(failed.code == .streamsUnsupported && failed.message.contains("supportsStreams"))
        #expect(ContinuousClock.now - started < .seconds(2))
        _ = try await continuing.call(.continue, ContinueParams(id: nearbyID), as: WillContinue.self)
        _ = try await continuing.event(.continued, as: ContinuedEvent.self, timeout: .seconds(20))
    }

    /// A's bound of one stream per user is taken: A answers the second `0x13` without an offer, and B fails
    /// with `streams-unsupported` (no hang, no `continued`); the open stream goes on unharmed. Then A's app
    /// closes its connection: the open stream ends on both sides (B's app reads EOF early) and A's slot comes
    /// back.
    @Test func noOfferWhenTheOriginIsFullAndTheOriginAppLeavingEndsTheStream() async throws {
        let laptops = try await Self.laptops(originStreams: "max_per_user = 1")
        defer { Task { await laptops.stop() } }
        let (origin, continuing, nearbyID) = try await Self.publish(laptops)
        let first = try await Self.open(origin, continuing, nearbyID)
        let second = try await laptops.b.client(handles: [TwoLaptops.type])
        guard case .failure(let failed) = try await Self.continueWithStream(second, nearbyID) else {
            Issue.record("a second stream beyond A's max_per_user = 1")
            return
        }
        #expect(failed.code == .streamsUnsupported && failed.message.contains("no stream offer"), "\(failed.message)")
        #expect(laptops.a.log.contains("max_per_user"))
        // The first stream still carries bytes, without ending.
        #expect(await first.continuing.write([1, 2, 3], end: false))
        var got: [UInt8] = []
        while got.count < 3 {
            var chunk = [UInt8](repeating: 0, count: 16)
            let n = read(first.origin.fd, &chunk, 16)
            guard n > 0 else { break }
            got += chunk[0..<n]
        }
        #expect(got == [1, 2, 3])
        // A's app goes: its stream ends on both sides.
        origin.close()
        let ended = await first.continuing.readAll()
        #expect(ended.bytes.isEmpty)
        try await eventually { laptops.a.log.contains("failed: the stream ended without its end frame") }
        try await eventually { laptops.b.log.contains("stream of c1 failed") }
    }
}
