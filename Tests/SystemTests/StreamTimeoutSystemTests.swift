#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import HandoffCore
import HandoffProtocol
import Testing

/// `continue`'s `timeout` bounds the whole continuation, the stream's channel and handshake included
/// (docs/protocol.md, "Continuation streams"): B against a `FakeOrigin` that offers a stream on a PSM where
/// something listens and never answers.
@Suite(.serialized, .timeLimit(.minutes(2))) struct StreamTimeoutSystemTests {
    /// The handshake would wait 5 s on its own; the continue's 4 s end it first (`timeout`, naming the
    /// continue's timeout), the channel closes and the stream's relay ends. (Only one try: the fake origin,
    /// connected, is not heard again.)
    @Test func theContinueTimeoutBoundsTheStreamHandshake() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--rescan-interval", "1", "--extended-advertising"])
        let directory = FileManager.default.temporaryDirectory.path + "/streams-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        let b = try await DaemonProcess(
            bus: bus, name: "b", adapter: "hci1",
            extraSections: "[streams]\nlocal_directory = \"\(directory)\"\n")
        let owner = try await b.client()
        _ = try await owner.call(.accountCreate, AccountNameParams(name: "me"), as: AccountInfo.self)
        let export = try await owner.call(.accountExport, AccountNameParams(name: "me"), as: AccountExportResult.self)
        let key = try AccountKeyCode.decode(export.code, name: "me")
        // Listening, never accepting: B's connect succeeds and its hello is never answered.
        let listening = try LocalStreamSocket.listen(at: directory + "/AA:BB:CC:DD:EE:99-0080")
        defer { Glibc.close(listening) }
        let origin = try await FakeOrigin(
            bus: bus, adapter: "/org/bluez/hci0", account: key, epochSeconds: 600, behaviour: .offersAStreamItNeverOpens,
            streamPSM: 0x0080)
        let reader = try await b.client(handles: [FakeOrigin.type])
        try await eventually(within: .seconds(15)) {
            try await reader.call(.list, EmptyResult(), as: ListResult.self).activities.first?.supportsStreams == true
        }
        let nearbyID = try await reader.call(.list, EmptyResult(), as: ListResult.self).activities[0].id
        _ = try await reader.call(.continue, ContinueParams(id: nearbyID, timeout: 4, streams: true), as: WillContinue.self)
        let (name, line) = try await reader.event(among: [.continued, .continueFailed], timeout: .seconds(20))
        #expect(name == .continueFailed)
        let failed = try WireFormat.eventData(ContinueFailedEvent.self, from: line)
        #expect(failed.code == .timeout && failed.message.contains("within the continue's timeout of 4 s"),
            "\(failed.code.rawValue): \(failed.message)")
        // Its relay ended (the slot was given back just before this line).
        try await eventually { b.log.contains("stream of c1 failed") }

        await origin.stop()
        _ = await b.terminate()
        await sim.stop()
        bus.stop()
    }
}

/// A bare `SOCK_SEQPACKET` listener in the stand-in's directory, as a PSM's socket.
enum LocalStreamSocket {
    static func listen(at path: String) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        guard bound == 0, Glibc.listen(fd, 8) == 0 else {
            Glibc.close(fd)
            throw TestFailure("cannot listen at \(path): errno \(errno)")
        }
        return fd
    }
}
