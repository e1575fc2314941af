import DBusTestSupport
import Foundation
import HandoffKit
import HandoffProtocol
import Testing

/// HandoffKit's continuation streams through two real handoffd on the simulated BlueZ (the streams over the
/// local stand-in, as `StreamSystemTests`): `UserActivity.incomingStreams` on A, `continueWithStreams` on B.
@Suite(.serialized, .timeLimit(.minutes(2))) struct HandoffKitStreamsSystemTests {
    static let document = (0..<1_000_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 9) }

    /// A's app, through HandoffKit, publishing `Chapter 3` (with streams or not).
    static func publish(_ laptops: TwoLaptops, streams: Bool) async throws -> (HandoffClient, UserActivity) {
        let client = HandoffClient(configuration: .init(app: "org.handoff.test.origin", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: client)
        activity.title = "Chapter 3"
        activity.supportsContinuationStreams = streams
        try await activity.becomeCurrent()
        return (client, activity)
    }

    /// B's app, once it hears A's activity with its `supportsStreams`.
    static func continuing(_ laptops: TwoLaptops, streams: Bool) async throws -> (HandoffClient, NearbyActivity) {
        let client = HandoffClient(
            configuration: .init(app: "org.handoff.test.reader", handles: [TwoLaptops.type], socketPath: laptops.b.socket))
        try await eventually(within: .seconds(15)) {
            try await client.list().first { $0.type == TwoLaptops.type }?.supportsStreams == streams
        }
        return (client, try #require(try await client.list().first { $0.type == TwoLaptops.type }))
    }

    /// 1 MB from A's app to B's byte for byte after B's request, B's answer back (A checks it), then a second
    /// request and answer on the same streams; both apps finish and see the other's end.
    @Test func aMegabyteAndTwoRequestsCrossOneStream() async throws {
        let laptops = try await StreamSystemTests.laptops()
        defer { Task { await laptops.stop() } }
        let (originClient, activity) = try await Self.publish(laptops, streams: true)
        let served = Task {
            var incoming = activity.incomingStreams.makeAsyncIterator()
            guard let streams = await incoming.next() else { throw TestFailure("no incoming stream") }
            var reader = ChunkReader(streams)
            var answers: [String] = []
            while let request = try await reader.exactly(4) {
                #expect(request == Array("GET\n".utf8))
                try await streams.write(Self.document)
                answers.append(String(decoding: try #require(try await reader.exactly(18)), as: UTF8.self))
                try await streams.write(Array("OK\n".utf8))
            }
            await streams.finish()
            return (streams.peerDevice, answers)
        }
        let (client, nearby) = try await Self.continuing(laptops, streams: true)
        let (restored, streams) = try await client.continueWithStreams(nearby)
        #expect(restored.title == "Chapter 3")
        #expect(streams.peerDevice == nearby.device)
        var reader = ChunkReader(streams)
        for round in 1...2 {
            let asked = ContinuousClock.now
            try await streams.write(Array("GET\n".utf8))
            let received = try #require(try await reader.exactly(Self.document.count))
            print("HandoffKit stream round \(round): 1 MB in \(ContinuousClock.now - asked)")
            #expect(received == Self.document)
            try await streams.write(Array(String(format: "got %07d bytes\n", received.count).utf8))
            #expect(try await reader.exactly(3) == Array("OK\n".utf8))
        }
        await streams.finish()
        #expect(try await reader.exactly(1) == nil, "A finished after B did")
        let (device, answers) = try await served.value
        #expect(answers == ["got 1000000 bytes\n", "got 1000000 bytes\n"])
        #expect(device.count == 8)
        await streams.close()
        await client.close()
        await originClient.close()
    }

    /// A's app did not set `supportsContinuationStreams`: B's `continueWithStreams` fails with its own error.
    @Test func anOriginWithoutStreamsIsStreamsUnsupported() async throws {
        let laptops = try await StreamSystemTests.laptops()
        defer { Task { await laptops.stop() } }
        let (originClient, _) = try await Self.publish(laptops, streams: false)
        let (client, nearby) = try await Self.continuing(laptops, streams: false)
        let error = await #expect(throws: ContinueError.self) { try await client.continueWithStreams(nearby) }
        #expect(error?.code == .streamsUnsupported)
        await client.close()
        await originClient.close()
    }

    /// A's app writes part of the document and closes its streams at once: B reads what A wrote, then the end,
    /// short of the length it was promised; B's writes then fail with `streamBroken` before long.
    @Test func anOriginAppClosingEarlyEndsTheStreamShort() async throws {
        let laptops = try await StreamSystemTests.laptops()
        defer { Task { await laptops.stop() } }
        let (originClient, activity) = try await Self.publish(laptops, streams: true)
        let served = Task {
            var incoming = activity.incomingStreams.makeAsyncIterator()
            guard let streams = await incoming.next() else { throw TestFailure("no incoming stream") }
            try await streams.write(Self.document.prefix(100_000))
            await streams.close()
        }
        let (client, nearby) = try await Self.continuing(laptops, streams: true)
        let (_, streams) = try await client.continueWithStreams(nearby)
        // B reads while A writes: A's write of 100 kB can wait for B to take some of it (back-pressure), so
        // waiting for A's task first could hold both until a timeout (30 s in one full-suite run).
        var received: [UInt8] = []
        do {
            for try await chunk in streams.inbound { received += chunk }
        } catch let error as HandoffClientError {
            guard case .streamBroken = error else { throw error }
        }
        try await served.value
        // All of it: the app wrote it before closing, and its connection counts as the app's although it was
        // gone before handoffd looked (its credentials are read at accept; read later, half of the runs lost the
        // app, and B got nothing until the 30 s app wait ended the stream).
        #expect(received.count == 100_000)
        #expect(received == Array(Self.document.prefix(received.count)))
        let failure = await #expect(throws: HandoffClientError.self) {
            for _ in 0..<400 {
                try await streams.write(Array(repeating: 0x55, count: 16 * 1024))
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        guard case .streamBroken = failure else {
            Issue.record("expected streamBroken, got \(String(describing: failure))")
            return
        }
        await client.close()
        await originClient.close()
    }
}

/// Exact reads over `ContinuationStreams.inbound`, however its chunks were cut.
struct ChunkReader {
    private var iterator: ContinuationStreams.Inbound.AsyncIterator
    private var buffer: [UInt8] = []

    init(_ streams: ContinuationStreams) { iterator = streams.inbound.makeAsyncIterator() }

    /// `count` bytes, or nil when the stream ended first (with what came dropped).
    mutating func exactly(_ count: Int) async throws -> [UInt8]? {
        while buffer.count < count {
            guard let chunk = try await iterator.next() else { return nil }
            buffer += chunk
        }
        defer { buffer.removeFirst(count) }
        return Array(buffer[..<count])
    }
}
