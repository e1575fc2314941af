import DBusTestSupport
import Foundation
import Glibc
import HandoffCore
import NIOCore
import NIOPosix
import SystemPackage
import Testing

@testable import HandoffDaemon

/// The stand-in for LE L2CAP channels (`LocalStreamTransport`) and the NIO side of a channel
/// (`StreamChannelIO`): docs/continuation.md, section 10.6.
@Suite struct LocalStreamTransportTests {
    static let origin = "AA:BB:CC:DD:EE:01"
    static let continuing = "AA:BB:CC:DD:EE:02"

    /// A fresh short directory (socket paths are limited to 107 bytes); removed by `cleanUp`.
    static func directory() throws -> String {
        var template = Array("/tmp/hs-XXXXXX".utf8CString)
        guard let made = mkdtemp(&template) else { throw StreamTransportError.system(call: "mkdtemp", errno: errno) }
        return String(cString: made)
    }

    static func cleanUp(_ directory: String) { try? FileManager.default.removeItem(atPath: directory) }

    static func peer(_ address: String = origin) -> StreamPeer {
        StreamPeer(adapterAddress: continuing, address: address, addressType: "random")
    }

    /// A listener of the origin in `directory` (close it when done) and one channel from the continuing side
    /// through it, both ends driven by NIO.
    static func channelPair(in directory: String, sendUnit: Int = StreamFormat.maximumFrameLength) async throws
        -> (listener: any StreamTransportListener, outgoing: StreamChannelIO, incoming: StreamChannelIO)
    {
        let listener = try await LocalStreamTransport(directory: directory, adapterAddress: Self.origin, sendUnit: sendUnit)
            .listen()
        do {
            let continuing = LocalStreamTransport(directory: directory, adapterAddress: Self.continuing, sendUnit: sendUnit)
            let group = MultiThreadedEventLoopGroup.singleton
            let outgoing = try await StreamChannelIO.open(
                continuing.connect(to: peer(), psm: listener.psm, timeout: .seconds(1)), group: group)
            return (listener, outgoing, try await StreamChannelIO.open(listener.accept(), group: group))
        } catch {
            listener.close()
            throw error
        }
    }

    @Test func eachListenerGetsAFreePSMOfTheDynamicRangeAndAConnectionReachesIt() async throws {
        let directory = try Self.directory()
        defer { Self.cleanUp(directory) }
        let origin = LocalStreamTransport(directory: directory, adapterAddress: Self.origin)
        let first = try await origin.listen()
        let second = try await origin.listen()
        defer { first.close(); second.close() }
        #expect(first.psm == 0x0080 && second.psm == 0x0081)
        #expect(FileManager.default.fileExists(atPath: directory + "/AA:BB:CC:DD:EE:01-0081"))

        let continuing = LocalStreamTransport(directory: directory, adapterAddress: Self.continuing)
        let outgoing = try await continuing.connect(to: Self.peer(), psm: 0x0081, timeout: .seconds(1))
        let incoming = try await second.accept()
        defer { try? outgoing.descriptor.close(); try? incoming.descriptor.close() }
        #expect(try outgoing.descriptor.writeAll([UInt8]([1, 2, 3])) == 3)
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = try buffer.withUnsafeMutableBytes { try incoming.descriptor.read(into: $0) }
        #expect(Array(buffer[0..<count]) == [1, 2, 3])
    }

    @Test func aClosedListenerFailsItsAcceptsAndFreesItsPSM() async throws {
        let directory = try Self.directory()
        defer { Self.cleanUp(directory) }
        let origin = LocalStreamTransport(directory: directory, adapterAddress: Self.origin)
        let listener = try await origin.listen()
        let waiting = Task { try await listener.accept() }
        try await Task.sleep(for: .milliseconds(50))
        listener.close()
        await #expect(throws: StreamTransportError.closed) { try await waiting.value }
        await #expect(throws: StreamTransportError.closed) { try await listener.accept() }
        let continuing = LocalStreamTransport(directory: directory, adapterAddress: Self.continuing)
        await #expect(throws: StreamTransportError.refused(psm: 0x0080)) {
            try await continuing.connect(to: Self.peer(), psm: 0x0080, timeout: .seconds(1))
        }
        let again = try await origin.listen()
        defer { again.close() }
        #expect(again.psm == 0x0080)
    }

    /// A directory too long for a Unix socket path is an error, not a crash.
    @Test func aSocketPathTooLongIsAnError() async throws {
        let transport = LocalStreamTransport(directory: "/tmp/" + String(repeating: "d", count: 120), adapterAddress: Self.origin)
        await #expect(throws: StreamTransportError.system(call: "socket path", errno: ENAMETOOLONG)) {
            try await transport.listen()
        }
    }

    /// A daemon that ended without closing its listener leaves a socket file; the next listen takes it over.
    @Test func aStaleSocketFileIsTakenOver() async throws {
        let directory = try Self.directory()
        defer { Self.cleanUp(directory) }
        let stale = try LocalStreamTransport.socket()
        #expect(try LocalStreamTransport.bind(stale, to: directory + "/AA:BB:CC:DD:EE:01-0080"))
        _ = Glibc.close(stale)
        let listener = try await LocalStreamTransport(directory: directory, adapterAddress: Self.origin).listen()
        defer { listener.close() }
        #expect(listener.psm == 0x0080)
    }

    /// The directory is one air: a PSM another laptop listens on is not taken again, and a connect to an
    /// address with no socket there (the origin's random advertising address) reaches the PSM's one
    /// listener; with two holders of the PSM (a stale file of a third address) it is refused instead.
    @Test func aPSMIsUniqueInTheDirectoryAndAConnectFallsBackToItsOnlyListener() async throws {
        let directory = try Self.directory()
        defer { Self.cleanUp(directory) }
        let origin = try await LocalStreamTransport(directory: directory, adapterAddress: Self.origin).listen()
        defer { origin.close() }
        let continuing = LocalStreamTransport(directory: directory, adapterAddress: Self.continuing)
        let other = try await continuing.listen()
        defer { other.close() }
        #expect(origin.psm == 0x0080 && other.psm == 0x0081)

        let advertised = Self.peer("5E:11:22:33:44:55")
        let outgoing = try await continuing.connect(to: advertised, psm: 0x0080, timeout: .seconds(1))
        let incoming = try await origin.accept()
        defer { try? outgoing.descriptor.close(); try? incoming.descriptor.close() }
        #expect(try outgoing.descriptor.writeAll([UInt8]([7])) == 1)
        var buffer = [UInt8](repeating: 0, count: 4)
        #expect(try buffer.withUnsafeMutableBytes { try incoming.descriptor.read(into: $0) } == 1 && buffer[0] == 7)
        // Its own listener is never the fallback.
        await #expect(throws: StreamTransportError.refused(psm: 0x0081)) {
            _ = try await continuing.connect(to: advertised, psm: 0x0081, timeout: .seconds(1))
        }

        let stale = try LocalStreamTransport.socket()
        #expect(try LocalStreamTransport.bind(stale, to: directory + "/AA:BB:CC:DD:EE:03-0080"))
        _ = Glibc.close(stale)
        await #expect(throws: StreamTransportError.refused(psm: 0x0080)) {
            _ = try await continuing.connect(to: advertised, psm: 0x0080, timeout: .seconds(1))
        }
    }

    /// Each write is one record of at most `sendUnit` bytes and each read one whole record, even one far
    /// larger than NIO's default first read (2048 bytes): a truncated record would lose bytes for good.
    @Test func recordsKeepTheirBoundariesAndAreNeverTruncated() async throws {
        let directory = try Self.directory()
        defer { Self.cleanUp(directory) }
        let (listener, outgoing, incoming) = try await Self.channelPair(in: directory, sendUnit: 60_000)
        defer { listener.close() }
        let payload = (0..<125_001).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try await outgoing.channel.executeThenClose { _, _ in
            try await incoming.channel.executeThenClose { inbound, _ in
                try await StreamChannelIO.send([42], sendUnit: outgoing.sendUnit, on: outgoing.channel.channel)
                try await StreamChannelIO.send(payload, sendUnit: outgoing.sendUnit, on: outgoing.channel.channel)
                try await StreamChannelIO.send(Array(payload.prefix(5000)), sendUnit: 2048, on: outgoing.channel.channel)
                var iterator = inbound.makeAsyncIterator()
                var received: [UInt8] = []
                var sizes: [Int] = []
                while sizes.count < 7, let buffer = try await iterator.next() {
                    sizes.append(buffer.readableBytes)
                    received += buffer.readableBytesView
                }
                #expect(sizes == [1, 60_000, 60_000, 5001, 2048, 2048, 904])
                let intact = received == [42] + payload + payload.prefix(5000)
                #expect(intact)
            }
        }
    }

    /// A consumer that reads nothing for a while does not leave the SDUs in the kernel's queue (where Linux
    /// 6.1's L2CAP loses or reorders them once it is full, docs/continuation.md 10.6): NIO reads up to
    /// `bufferedSDUs` ahead, so 400 KB of frames leave the socket although nobody consumes them yet.
    @Test func aStalledConsumerStillDrainsTheSocketUpToItsReadAhead() async throws {
        let directory = try Self.directory()
        defer { Self.cleanUp(directory) }
        let (listener, outgoing, incoming) = try await Self.channelPair(in: directory)
        defer { listener.close() }
        let unit = 2048
        let count = 200
        #expect(count < StreamChannelIO.bufferedSDUs)
        let sent = ManagedAtomicCounter()
        try await outgoing.channel.executeThenClose { _, _ in
            try await incoming.channel.executeThenClose { inbound, _ in
                let writer = Task {
                    for k in 0..<count {
                        try await StreamChannelIO.send(
                            [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: unit), sendUnit: unit,
                            on: outgoing.channel.channel)
                        sent.set(k + 1)
                    }
                }
                try await eventually(within: .seconds(10)) { sent.value == count }
                // Then every SDU arrives, in order.
                var iterator = inbound.makeAsyncIterator()
                for k in 0..<count {
                    let buffer = try #require(try await iterator.next())
                    #expect(Array(buffer.readableBytesView) == [UInt8](repeating: UInt8(truncatingIfNeeded: k), count: unit))
                }
                try await writer.value
            }
        }
    }

    /// A reader that does not read stops the writer on the other side: NIO stops reading at `bufferedSDUs`
    /// (about 512 KiB), the socket buffers fill, and `send` waits; nothing grows without bound. Then all 10 MB
    /// arrive intact.
    @Test func aSlowReaderHoldsTheWriterBackAndTenMegabytesArriveIntact() async throws {
        let directory = try Self.directory()
        defer { Self.cleanUp(directory) }
        let (listener, outgoing, incoming) = try await Self.channelPair(in: directory)
        defer { listener.close() }
        let chunk = 64 * 1024
        let blocks = 160  // 10 MB
        let base = (0..<chunk).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        /// Block `k` is `base` with `k` in its first two bytes, so a lost, repeated or reordered block shows.
        func block(_ k: Int) -> [UInt8] {
            var bytes = base
            bytes[0] = UInt8(k >> 8)
            bytes[1] = UInt8(truncatingIfNeeded: k)
            return bytes
        }
        let sent = ManagedAtomicCounter()
        try await outgoing.channel.executeThenClose { _, _ in
            try await incoming.channel.executeThenClose { inbound, _ in
                let writer = Task {
                    for k in 0..<blocks {
                        try await StreamChannelIO.send(block(k), sendUnit: outgoing.sendUnit, on: outgoing.channel.channel)
                        sent.set((k + 1) * chunk)
                    }
                }
                var iterator = inbound.makeAsyncIterator()
                var pending: [UInt8] = []
                if let first = try await iterator.next() { pending += first.readableBytesView }
                // The buffers fill within milliseconds; from then on the writer waits, whatever the load.
                try await Task.sleep(for: .milliseconds(400))
                let stalledAt = sent.value
                try await Task.sleep(for: .milliseconds(400))
                #expect(sent.value == stalledAt, "the writer went on while the reader read nothing")
                #expect(stalledAt < 2 * 1024 * 1024, "the writer ran \(stalledAt) bytes ahead of a stalled reader")
                var intactBlocks = 0
                while intactBlocks < blocks, let buffer = try await iterator.next() {
                    pending += buffer.readableBytesView
                    if pending.count >= chunk {
                        guard Array(pending.prefix(chunk)) == block(intactBlocks) else { break }
                        pending.removeFirst(chunk)
                        intactBlocks += 1
                    }
                }
                try await writer.value
                #expect(intactBlocks == blocks && pending.isEmpty)
            }
        }
    }
}

/// A counter shared between a writer task and the test.
final class ManagedAtomicCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var stored = 0
    var value: Int { lock.withLock { stored } }
    func set(_ value: Int) { lock.withLock { stored = value } }
}
