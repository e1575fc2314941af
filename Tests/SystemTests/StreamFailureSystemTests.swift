#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import HandoffProtocol
import Synchronization
import Testing

/// Continuation streams that do not end cleanly (docs/protocol.md, "Continuation streams", "Ends without EOF
/// from the other app"; docs/continuation.md, section 10.7), with real handoffds over the stand-in: the link
/// cut, a stranger on the offered PSM, either app closing early. Each checks that the stream's budget slot
/// comes back by opening another stream under a bound of one per user.
@Suite(.serialized, .timeLimit(.minutes(3))) struct StreamFailureSystemTests {
    typealias S = StreamSystemTests

    /// Reads until at least `count` bytes came (or EOF or an error); the bytes.
    static func read(atLeast count: Int, from fd: Int32) async -> [UInt8] {
        await await StreamAppEnd.onThread {
            var received: [UInt8] = []
            var chunk = [UInt8](repeating: 0, count: 65_536)
            while received.count < count {
                let n = Glibc.read(fd, &chunk, chunk.count)
                guard n > 0 else { break }
                received += chunk[0..<n]
            }
            return received
        }
    }

    /// A stream that carries one byte each way and ends cleanly: proof that a slot was free on both sides.
    static func aFreshStreamWorks(_ origin: WireClient, _ continuing: WireClient, _ nearbyID: String) async throws {
        let ends = try await S.open(origin, continuing, nearbyID)
        async let up = ends.continuing.write([7])
        async let down = ends.origin.write([8])
        async let atOrigin = ends.origin.readAll()
        async let atContinuing = ends.continuing.readAll()
        #expect(await (up, down) == (true, true))
        #expect(await atOrigin.bytes == [7])
        #expect(await atContinuing.bytes == [8])
    }

    /// The link is cut in the middle of a transfer (B's handoffd is killed: the stand-in's channels do not
    /// follow the simulator's links, so the continuing laptop vanishing is the cut). A's app reads the early
    /// end instead of hanging, its writes fail, A's log says `truncated`, and A's slot (one per user) comes
    /// back: a third laptop then gets a stream from the same app.
    @Test func aLinkCutMidStreamEndsItAtTheOriginAndGivesTheSlotBack() async throws {
        let directory = FileManager.default.temporaryDirectory.path + "/streams-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let sections = "[streams]\nlocal_directory = \"\(directory)\"\n"
        let laptops = try await TwoLaptops(
            adapters: 3, originSections: sections + "max_per_user = 1\n", continuingSections: sections)
        defer { Task { await laptops.stop() } }
        let (origin, continuing, nearbyID) = try await S.publish(laptops)
        let ends = try await S.open(origin, continuing, nearbyID)
        let sent = S.pattern(10 * 1024 * 1024, 3)
        async let wrote = ends.origin.write(sent)
        async let atOrigin = ends.origin.readAll()
        let first = await Self.read(atLeast: 256 * 1024, from: ends.continuing.fd)
        #expect(first == Array(sent.prefix(first.count)) && first.count >= 256 * 1024)

        laptops.b.process.kill()
        #expect(await wrote == false, "A's app wrote all 10 MB into a cut stream")
        #expect(await atOrigin.bytes.isEmpty)
        try await eventually(within: .seconds(15)) {
            laptops.a.log.contains("stream for a1 failed: the stream ended without its end frame")
        }

        let c = try await DaemonProcess(bus: laptops.bus, name: "c", adapter: "hci2", extraSections: sections)
        defer { Task { _ = await c.terminate() } }
        let export = try await laptops.a.client().call(
            .accountExport, AccountNameParams(name: "me"), as: AccountExportResult.self)
        _ = try await c.client().call(
            .accountImport, AccountImportParams(code: export.code, name: "me"), as: AccountInfo.self)
        let third = try await c.client(handles: [TwoLaptops.type])
        try await eventually(within: .seconds(15)) {
            try await third.call(.list, EmptyResult(), as: ListResult.self).activities.first?.supportsStreams == true
        }
        let thirdNearby = try await third.call(.list, EmptyResult(), as: ListResult.self).activities[0].id
        try await Self.aFreshStreamWorks(origin, third, thirdNearby)
    }

    /// Strangers connect to the offered PSM (its socket file in the stand-in's directory) before B: B is
    /// frozen (SIGSTOP) the moment the file appears, until both connected, and its log shows it had not begun
    /// to connect. Two strangers say nothing (one after the other they would outlast B's 5 s handshake), one
    /// sends junk. B's app still gets its stream, bytes cross both
    /// ways, and neither stranger reads a byte (A closes each channel without sending: the junk at once, the
    /// silent one at the 5 s handshake timeout).
    @Test func strangersOnTheOfferedPSMGetNothingAndDelayNobody() async throws {
        let laptops = try await S.laptops()
        defer { Task { await laptops.stop() } }
        let (origin, continuing, nearbyID) = try await S.publish(laptops)
        let directory = try #require(Self.streamsDirectory(of: laptops.a))
        let strangers = Strangers(directory: directory, frozen: laptops.b.process.pid, log: laptops.b.logPath)
        async let connected = strangers.connectToTheFirstOffer()
        let ends = try await S.open(origin, continuing, nearbyID)
        let (fds, first) = await connected
        try #require(fds.count == 3 && first, "the strangers came after B: \(fds.count) connected")
        async let up = ends.continuing.write([1, 2, 3])
        async let down = ends.origin.write([4, 5])
        async let atOrigin = ends.origin.readAll()
        async let atContinuing = ends.continuing.readAll()
        #expect(await (up, down) == (true, true))
        #expect(await atOrigin.bytes == [1, 2, 3])
        #expect(await atContinuing.bytes == [4, 5])
        for fd in fds {
            let got = await Self.read(atLeast: 1, from: fd)
            Glibc.close(fd)
            #expect(got.isEmpty, "a stranger read \(got.count) bytes")
        }
        try await eventually { laptops.a.log.components(separatedBy: "stream channel for a1 refused").count - 1 == 3 }
    }

    /// B's app closes its socket after reading part of A's 10 MB: B's relay gives up (`appGone`, abort
    /// `cancelled` to A), A's app's writes fail and it reads the end, and both slots (one per user on each
    /// side) come back.
    @Test func theContinuingAppClosingEarlyEndsTheStreamAndGivesBothSlotsBack() async throws {
        let laptops = try await S.laptops(originStreams: "max_per_user = 1", continuingStreams: "max_per_user = 1")
        defer { Task { await laptops.stop() } }
        let (origin, continuing, nearbyID) = try await S.publish(laptops)
        let ends = try await S.open(origin, continuing, nearbyID)
        await Self.leaveEarly(ends.continuing, whileWriting: ends.origin)
        try await eventually { laptops.b.log.contains("stream of c1 failed: the app on this side gave the stream up") }
        try await eventually { laptops.a.log.contains("stream for a1 failed") }
        try await Self.aFreshStreamWorks(origin, continuing, nearbyID)
    }

    /// A's app ends its direction at once (`SHUT_WR`): B's app reads EOF while still writing, and its bytes
    /// still all arrive (the stream then finishes cleanly). Next A's app closes its socket in the middle of
    /// B's 10 MB: B's writes fail and it reads the end. Each time both slots come back.
    @Test func theOriginAppEndingEarlyIsSeenByTheOtherAppAndGivesBothSlotsBack() async throws {
        let laptops = try await S.laptops(originStreams: "max_per_user = 1", continuingStreams: "max_per_user = 1")
        defer { Task { await laptops.stop() } }
        let (origin, continuing, nearbyID) = try await S.publish(laptops)

        let halfClosed = try await S.open(origin, continuing, nearbyID)
        #expect(await halfClosed.origin.write([], end: true))
        let eof = await halfClosed.continuing.readAll()
        #expect(eof.bytes.isEmpty && eof.error == nil)
        let sent = S.pattern(1024 * 1024, 5)
        async let atOrigin = halfClosed.origin.readAll()
        #expect(await halfClosed.continuing.write(sent))
        #expect(await atOrigin.bytes == sent)
        try await eventually { laptops.b.log.contains("stream of c1 finished") && laptops.a.log.contains("stream for a1 finished") }

        let closed = try await S.open(origin, continuing, nearbyID)
        await Self.leaveEarly(closed.origin, whileWriting: closed.continuing)
        try await eventually { laptops.a.log.contains("stream for a1 failed: the app on this side gave the stream up") }
        try await eventually { laptops.b.log.contains("stream of c2 failed") }
        try await Self.aFreshStreamWorks(origin, continuing, nearbyID)
    }

    /// `writer` sends 10 MB; `leaver` reads 64 KiB of it and closes its socket: the writer's writes fail and
    /// it reads the end (no byte: nothing was sent its way).
    static func leaveEarly(_ leaver: StreamAppEnd, whileWriting writer: StreamAppEnd) async {
        async let wrote = writer.write(S.pattern(10 * 1024 * 1024, 4))
        async let atWriter = writer.readAll()
        let first = await Self.read(atLeast: 64 * 1024, from: leaver.fd)
        #expect(first.count >= 64 * 1024)
        leaver.close()
        #expect(await wrote == false, "all 10 MB were written to an app that left")
        #expect(await atWriter.bytes.isEmpty)
    }

    /// The `[streams] local_directory` of a daemon's configuration.
    static func streamsDirectory(of daemon: DaemonProcess) -> String? {
        guard let config = try? String(contentsOfFile: daemon.configPath, encoding: .utf8),
            let line = config.split(separator: "\n").first(where: { $0.hasPrefix("local_directory") })
        else { return nil }
        return line.split(separator: "\"").dropFirst().first.map(String.init)
    }
}

/// Two local users' processes that watch the stand-in's directory and connect to the first PSM socket that
/// appears there, with the continuing daemon frozen meanwhile: two stay silent, one sends 40 bytes of junk.
private struct Strangers: Sendable {
    let directory: String
    /// The continuing daemon, stopped from the file's appearance until both strangers connected.
    let frozen: pid_t
    /// Its log: it must not yet say that it opens the stream.
    let log: String

    /// The connected descriptors (fewer when the listener was gone before they could connect), and whether
    /// the continuing daemon had not begun to connect when they did.
    func connectToTheFirstOffer() async -> (fds: [Int32], first: Bool) {
        let (directory, frozen, log) = (directory, frozen, log)
        return await StreamAppEnd.onThread {
            var first = false
            defer { Glibc.kill(frozen, SIGCONT) }
            let deadline = ContinuousClock.now + .seconds(30)
            var fds: [Int32] = []
            while ContinuousClock.now < deadline {
                let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
                guard let name = names.first else {
                    usleep(200)
                    continue
                }
                Glibc.kill(frozen, SIGSTOP)
                let said = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
                first = !said.contains("opening the stream of")
                // Bound but maybe not yet listening: ECONNREFUSED for a moment.
                while fds.count < 3 && ContinuousClock.now < deadline {
                    let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
                    var address = sockaddr_un()
                    address.sun_family = sa_family_t(AF_UNIX)
                    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array((directory + "/" + name).utf8)) }
                    let result = withUnsafePointer(to: &address) {
                        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                            connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
                        }
                    }
                    if result == 0 {
                        fds.append(fd)
                        continue
                    }
                    let code = errno
                    Glibc.close(fd)
                    if code != ECONNREFUSED { break }
                    usleep(200)
                }
                break
            }
            if fds.count == 3 {
                let junk = [UInt8](repeating: 0x5A, count: 40)
                _ = junk.withUnsafeBytes { send(fds[2], $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            }
            return (fds, first)
        }
    }
}
