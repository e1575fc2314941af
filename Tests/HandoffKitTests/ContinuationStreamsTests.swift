import Foundation
import HandoffKit
import Synchronization
import Testing

/// `ContinuationStreams` over a real Unix socket whose other end is a plain POSIX socket, as handoffd's
/// app socket is: bytes both ways, half-closure, back-pressure, and a peer that goes away.
@Suite(.timeLimit(.minutes(1))) struct ContinuationStreamsTests {
    /// 1 MB from the peer byte for byte; then, after the peer finished, an answer goes back: reading the
    /// end of one direction does not close the other.
    @Test func aMegabyteArrivesWholeAndAnAnswerGoesBackAfterIt() async throws {
        let peer = try StreamPeer()
        let document = StreamPeer.pattern(1_000_000)
        async let served: [UInt8] = {
            let fd = try await peer.accept()
            defer { StreamPeer.close(fd) }
            try await StreamPeer.write(fd, document)
            StreamPeer.shutdownOutput(fd)
            return try await StreamPeer.readToEnd(fd)
        }()
        let streams = try await ContinuationStreams.connect(path: peer.path, peerDevice: "8c41d2f0")
        #expect(streams.peerDevice == "8c41d2f0")
        let received = try await streams.inbound.collect(upTo: 2_000_000)
        #expect(received.count == document.count)
        #expect(received == document)
        let answer = Array("got \(received.count) bytes\n".utf8)
        try await streams.write(answer)
        await streams.finish()
        #expect(try await served == answer)
        await streams.close()
    }

    /// `finish()` ends only this side's output: the peer reads the request to its end, then answers, and
    /// the answer still arrives.
    @Test func finishEndsOnlyThisDirection() async throws {
        let peer = try StreamPeer()
        async let served: [UInt8] = {
            let fd = try await peer.accept()
            defer { StreamPeer.close(fd) }
            let request = try await StreamPeer.readToEnd(fd)
            try await StreamPeer.write(fd, Array("answer to ".utf8) + request)
            StreamPeer.shutdownOutput(fd)
            return request
        }()
        let streams = try await ContinuationStreams.connect(path: peer.path, peerDevice: "0a0b0c0d")
        try await streams.write(Array("GET ".utf8))
        try await streams.write(Data("chapter-3".utf8))
        await streams.finish()
        #expect(try await served == Array("GET chapter-3".utf8))
        #expect(try await streams.inbound.collect(upTo: 100) == Array("answer to GET chapter-3".utf8))
    }

    /// A peer that reads nothing holds the writer back: after a second, far less than what the writer
    /// wants to send has been accepted; once the peer reads, all of it arrives in order.
    @Test func aWriterWaitsForAPeerThatDoesNotRead() async throws {
        let peer = try StreamPeer()
        let connected = Task { try await peer.accept() }
        let streams = try await ContinuationStreams.connect(path: peer.path, peerDevice: "0a0b0c0d")
        let fd = try await connected.value
        defer { StreamPeer.close(fd) }
        let chunk = StreamPeer.pattern(256 * 1024, seed: 7)
        let chunks = 128  // 32 MiB
        let accepted = Atomic<Int>(0)
        let writer = Task {
            for _ in 0..<chunks {
                try await streams.write(chunk)
                accepted.add(chunk.count, ordering: .relaxed)
            }
            await streams.finish()
        }
        try await Task.sleep(for: .seconds(1))
        let early = accepted.load(ordering: .relaxed)
        #expect(early < 12 * 1024 * 1024, "the writer ran ahead of a peer that reads nothing: \(early) bytes")
        let all = try await StreamPeer.readToEnd(fd)
        try await writer.value
        #expect(all.count == chunk.count * chunks)
        #expect(all == Array(repeating: chunk, count: chunks).flatMap { $0 })
    }

    /// A peer that closes early: what it sent arrives, then `inbound` ends (the app tells a cut from a clean
    /// end by the length it was promised), and writing fails with `streamBroken` before long.
    @Test func aPeerThatClosesEarlyEndsInboundAndFailsWrites() async throws {
        let peer = try StreamPeer()
        async let served: Void = {
            let fd = try await peer.accept()
            try await StreamPeer.write(fd, Array("partial".utf8))
            StreamPeer.close(fd)
        }()
        let streams = try await ContinuationStreams.connect(path: peer.path, peerDevice: "0a0b0c0d")
        try await served
        #expect(try await streams.inbound.collect(upTo: 100) == Array("partial".utf8))
        let failure = await #expect(throws: HandoffClientError.self) {
            for _ in 0..<200 {
                try await streams.write(StreamPeer.pattern(64 * 1024))
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        guard case .streamBroken = failure else {
            Issue.record("expected streamBroken, got \(String(describing: failure))")
            return
        }
    }

    /// Writing after `finish()` or `close()` is a clear error, not a silent loss.
    @Test func writingAfterFinishOrCloseFails() async throws {
        let peer = try StreamPeer()
        let connected = Task { try await peer.accept() }
        let streams = try await ContinuationStreams.connect(path: peer.path, peerDevice: "0a0b0c0d")
        let fd = try await connected.value
        defer { StreamPeer.close(fd) }
        await streams.finish()
        #expect(try await StreamPeer.readToEnd(fd).isEmpty)
        await #expect(throws: HandoffClientError.self) { try await streams.write(Array("late".utf8)) }
        await streams.close()
        await #expect(throws: HandoffClientError.self) { try await streams.write(Array("later".utf8)) }
    }

    /// A path nobody listens on (handoffd's 30 s wait ended) is `streamConnectFailed` naming it.
    @Test func aPathNobodyListensOnFailsToConnect() async throws {
        let path = "/tmp/handoff-no-stream-\(UUID().uuidString.prefix(8)).stream"
        let error = await #expect(throws: HandoffClientError.self) {
            _ = try await ContinuationStreams.connect(path: path, peerDevice: "0a0b0c0d")
        }
        guard case .streamConnectFailed(let named, _) = error else {
            Issue.record("expected streamConnectFailed, got \(String(describing: error))")
            return
        }
        #expect(named == path)
        #expect(error?.description.hasPrefix("cannot open the continuation stream at \(path): ") == true)
    }
}
