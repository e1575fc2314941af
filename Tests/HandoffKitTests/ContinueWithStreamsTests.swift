import Foundation
import HandoffKit
import HandoffProtocol
import HandoffTestSupport
import Synchronization
import Testing

/// The stream messages of docs/protocol.md ("Continuation streams") as HandoffKit sends and reads them,
/// against a daemon scripted to answer as that section says; the streams' sockets are real.
/// `StreamsSystemTests` runs the same API through two real handoffd.
@Suite(.timeLimit(.minutes(1))) struct ContinueWithStreamsTests {
    /// `continueWithStreams` sends `streams: true`, and picks up the socket `continued` names.
    @Test func continueWithStreamsAsksForThemAndPicksUpTheSocket() async throws {
        let peer = try StreamPeer()
        var state = ScriptedDaemon.State()
        state.activities = [sampleActivity(id: "n1")]
        state.continuations = ["n1": .succeedWithStream(ContinueTests.restored, path: peer.path)]
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let client = HandoffClient(app: "tests", handles: ["org.example.viewing"], socketPath: daemon.socketPath)
        async let served: [UInt8] = {
            let fd = try await peer.accept()
            defer { StreamPeer.close(fd) }
            try await StreamPeer.write(fd, Array("from the origin".utf8))
            StreamPeer.shutdownOutput(fd)
            return try await StreamPeer.readToEnd(fd)
        }()
        let nearby = try #require(try await client.list().first)
        let (activity, streams) = try await client.continueWithStreams(nearby)
        #expect(activity == ContinueTests.restored)
        #expect(streams.peerDevice == ContinueTests.restored.device)
        let request = try #require(daemon.requests.first { $0.method == .continue })
        #expect(try request.params(ContinueParams.self) == ContinueParams(id: "n1", streams: true))
        #expect(try await streams.inbound.collect(upTo: 100) == Array("from the origin".utf8))
        try await streams.write(Array("thanks".utf8))
        await streams.finish()
        #expect(try await served == Array("thanks".utf8))
        // A plain continue does not ask for streams.
        _ = try await client.continue(nearbyID: "n1")
        let plain = try #require(daemon.requests.last { $0.method == .continue })
        #expect(try plain.params(ContinueParams.self) == ContinueParams(id: "n1"))
        await client.close()
    }

    /// `streams-unsupported` is its own error; a `continued` without the stream asked for is a broken response.
    @Test func streamsUnsupportedAndAMissingStreamAreClearErrors() async throws {
        var state = ScriptedDaemon.State()
        state.continuations = [
            "n1": .fail(.streamsUnsupported, "the app did not publish the activity with supportsStreams"),
            "n2": .succeed(ContinueTests.restored),
        ]
        let daemon = try ScriptedDaemon(state)
        defer { daemon.stop() }
        let client = HandoffClient(app: "tests", socketPath: daemon.socketPath)
        let unsupported = await #expect(throws: ContinueError.self) { try await client.continueWithStreams(nearbyID: "n1") }
        #expect(unsupported == .streamsUnsupported("the app did not publish the activity with supportsStreams"))
        #expect(
            unsupported?.description
                == "no continuation stream could be opened with the other device: the app did not publish the activity with supportsStreams (streams-unsupported)"
        )
        let missing = await #expect(throws: HandoffClientError.self) { try await client.continueWithStreams(nearbyID: "n2") }
        guard case .invalidResponse = missing else {
            Issue.record("expected invalidResponse, got \(String(describing: missing))")
            return
        }
        await client.close()
    }

    /// The origin: `supportsContinuationStreams` goes out as `supportsStreams` in `publish` and, when it
    /// changes, in `update`; a `streamOpened` for the activity arrives on `incomingStreams`, connected.
    @Test func anOpenedStreamArrivesOnTheActivitysIncomingStreams() async throws {
        let daemon = try ScriptedDaemon()
        defer { daemon.stop() }
        let client = UserActivityTests.client(daemon)
        let activity = UserActivity(type: UserActivityTests.type, client: client)
        activity.title = "Chapter 3"
        activity.supportsContinuationStreams = true
        try await activity.becomeCurrent()
        let publish = try #require(UserActivityTests.requests(daemon, .publish).first)
        #expect(try publish.params(PublishParams.self).supportsStreams == true)
        let id = try #require(activity.publishedID)

        let peer = try StreamPeer()
        async let served: [UInt8] = {
            let fd = try await peer.accept()
            defer { StreamPeer.close(fd) }
            try await StreamPeer.write(fd, Array("GET\n".utf8))
            StreamPeer.shutdownOutput(fd)
            return try await StreamPeer.readToEnd(fd)
        }()
        daemon.daemon.broadcast(
            try WireFormat.event(.streamOpened, StreamOpenedEvent(id: "other", path: "/nonexistent", byDevice: "11111111")))
        daemon.daemon.broadcast(try WireFormat.event(.streamOpened, StreamOpenedEvent(id: id, path: peer.path, byDevice: "27be90c4")))
        var incoming = activity.incomingStreams.makeAsyncIterator()
        let streams = try #require(await incoming.next())
        #expect(streams.peerDevice == "27be90c4")
        #expect(try await streams.inbound.collect(upTo: 100) == Array("GET\n".utf8))
        try await streams.write(Array("the document".utf8))
        await streams.finish()
        #expect(try await served == Array("the document".utf8))

        activity.supportsContinuationStreams = false
        try await activity.update()
        let update = try #require(UserActivityTests.requests(daemon, .update).last)
        #expect(try update.params(UpdateParams.self).supportsStreams == false)
        // Invalidating ends the sequence.
        await activity.invalidate()
        #expect(await incoming.next() == nil)
        await client.close()
    }
}
