import Foundation
import Glibc
import NIOCore
import NIOPosix
import Testing

@testable import HandoffDaemon

/// The socket where an app picks up its end of a stream (`StreamAppSocket`): only the app's uid gets it.
@Suite(.timeLimit(.minutes(1))) struct StreamAppSocketTests {
    /// A plain client connection to `path`; the caller closes it.
    static func connect(_ path: String) throws -> Int32 {
        let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        // Reads give up after 5 s, so a stream that wrongly stays open fails the test instead of hanging it.
        var limit = timeval(tv_sec: 5, tv_usec: 0)
        setsockopt(descriptor, SOL_SOCKET, SO_RCVTIMEO, &limit, socklen_t(MemoryLayout<timeval>.size))
        let result = try LocalStreamTransport.withAddress(path) { Glibc.connect(descriptor, $0, $1) }
        guard result == 0 else { throw StreamTransportError.system(call: "connect", errno: errno) }
        return descriptor
    }

    @Test func theAppsUidGetsTheStreamAndTheFileGoes() async throws {
        let directory = try LocalStreamTransportTests.directory()
        defer { LocalStreamTransportTests.cleanUp(directory) }
        let socket = try await StreamAppSocket.listen(in: directory, group: MultiThreadedEventLoopGroup.singleton)
        #expect(socket.path.hasPrefix(directory + "/") && socket.path.hasSuffix(".stream"))
        #expect(socket.path.count == directory.count + 1 + 32 + 7)
        let app = try Self.connect(socket.path)
        defer { close(app) }
        let channel = try #require(await socket.accept(uid: getuid(), timeout: .seconds(5)))
        #expect(!FileManager.default.fileExists(atPath: socket.path))
        #expect(write(app, "ping", 4) == 4)
        shutdown(app, Int32(SHUT_WR))
        let received = try await channel.executeThenClose { inbound, outbound in
            var bytes: [UInt8] = []
            for try await buffer in inbound { bytes += buffer.readableBytesView }
            try await outbound.write(ByteBuffer(string: "pong"))
            return bytes
        }
        #expect(received == Array("ping".utf8))
        var answer = [UInt8](repeating: 0, count: 8)
        #expect(read(app, &answer, 8) == 4)
        #expect(answer.prefix(4) == Array("pong".utf8)[...])
    }

    @Test func anotherUidIsClosedWithoutAByteAndNobodyGetsTheStream() async throws {
        let directory = try LocalStreamTransportTests.directory()
        defer { LocalStreamTransportTests.cleanUp(directory) }
        let socket = try await StreamAppSocket.listen(in: directory, group: MultiThreadedEventLoopGroup.singleton)
        let stranger = try Self.connect(socket.path)
        defer { close(stranger) }
        let channel = await socket.accept(uid: getuid() &+ 1, timeout: .milliseconds(500))
        #expect(channel == nil)
        try? await channel?.channel.close()
        var byte: UInt8 = 0
        #expect(read(stranger, &byte, 1) == 0, "closed without a byte")
        #expect(!FileManager.default.fileExists(atPath: socket.path))
    }
}
