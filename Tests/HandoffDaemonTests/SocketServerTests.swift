import Foundation
import HandoffProtocol
import Testing

@testable import HandoffDaemon

/// The socket itself (issue 20): a real Unix socket in front of a `DaemonRig`.
@Suite(.timeLimit(.minutes(1))) struct SocketServerTests {
    /// A daemon rig serving a socket in a fresh directory.
    struct Served {
        let rig: DaemonRig
        let path: String
        let task: Task<Void, any Error>

        init(_ name: String, options: ClientGateway.Options = .init()) async throws {
            rig = try await DaemonRig(name, options: options)
            path = rig.directory.appendingPathComponent("s.sock").path
            let server = SocketServer(options: .init(path: path), gateway: rig.gateway, logger: .init(label: "socket"))
            let (listening, ready) = AsyncStream<Void>.makeStream()
            task = Task { try await server.run { ready.yield() } }
            for await _ in listening { break }
        }

        func stop() async {
            task.cancel()
            _ = await task.result
            await rig.stop()
        }
    }

    static let hello = "{\"id\":1,\"method\":\"hello\",\"params\":{\"app\":\"nc\",\"versions\":[1]}}\n"

    /// `printf '…\n' | nc -N -U sock`: the requests, then a half-close. Every request is answered, then EOF.
    @Test func aHalfClosedConnectionGetsEveryAnswerThenEndOfFile() async throws {
        let served = try await Served("halfclose")
        let client = try RawSocket(path: served.path)
        try await client.write(Array((Self.hello + "{\"id\":2,\"method\":\"status\"}\n{\"id\":3,\"method\":\"list\"}\n").utf8))
        client.shutdownWrite()
        let (lines, eof) = try await client.readLines(timeout: .seconds(10))
        #expect(lines.count == 3)
        for (index, line) in lines.enumerated() { #expect(line.contains("\"id\":\(index + 1),\"result\""), "\(line)") }
        #expect(eof)
        await served.stop()
    }

    /// HandoffKit pipelines; a client that sends thousands of requests at once and reads
    /// as it goes gets every answer, in order, however small the outbox.
    @Test func aClientThatPipelinesWhileReadingGetsEveryAnswer() async throws {
        var options = ClientGateway.Options()
        options.outboxCapacity = 16
        let served = try await Served("pipeline", options: options)
        let client = try RawSocket(path: served.path)
        let count = 3000
        var text = Self.hello
        for id in 2...count { text += "{\"id\":\(id),\"method\":\"status\"}\n" }
        let bytes = Array(text.utf8)
        async let written: Void = client.write(bytes)
        let (lines, eof) = try await client.readLines(count: count, timeout: .seconds(40))
        try await written
        #expect(!eof)
        #expect(lines.count == count)
        let ids = lines.compactMap { line -> Int? in
            guard let range = line.range(of: "\"id\":") else { return nil }
            return Int(line[range.upperBound...].prefix { $0.isNumber })
        }
        #expect(ids == Array(1...count))
        #expect(lines.allSatisfy { $0.contains("\"result\"") })
        await served.stop()
    }
}
