import ArgumentParser
import BluetoothManagement
import Foundation

/// C's side: connect to a PSM, check what arrives, answer.
struct Connect: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Connects to ADDRESS TYPE PSM, reads BYTES and checks them, writes an answer.")
    @OptionGroup var local: Local
    @Argument(help: "The peer's address (Device1.Address).") var address: String
    @Argument(help: "Its type: public or random (Device1.AddressType).") var type: String
    @Argument(help: "The PSM: 0x0080…0x00FF, decimal or 0x hex.") var psm: String
    @Option(help: "Bytes the listener sends.") var bytes: Int = 1_048_576
    @Option(help: "Bytes of the answer back.") var answer: Int = 65_536
    @Option(help: "Connect timeout in seconds.") var timeout: Double = 20
    @Option(help: ArgumentHelp(
        "Read slowly: after every --pause-every SDUs, wait this many milliseconds (0: read at once).",
        discussion: "The sender then runs ahead of the reader, and the kernel's receive queue and its credits decide what happens."))
    var readPauseMs: Int = 0
    @Option(help: "SDUs read between two pauses of --read-pause-ms.") var pauseEvery: Int = 4
    @Option(help: "Set the socket's receive buffer to this many bytes once connected (SO_RCVBUFFORCE, else SO_RCVBUF; 0: the kernel's default).")
    var receiveBuffer: Int = 0

    func run() async throws {
        guard let psm = psm.hasPrefix("0x") ? UInt16(psm.dropFirst(2), radix: 16) : UInt16(psm) else {
            throw ValidationError("PSM '\(psm)' is not a number")
        }
        let peer = try LEAddress(address, type: type)
        let from = try local.address()
        let start = Date()
        let channel: L2CAPChannel
        do throws(L2CAPError) {
            channel = try await L2CAPConnector.connect(
                from: from, to: peer, psm: psm, timeout: .milliseconds(Int(timeout * 1000)),
                receiveMTU: local.mtu)
        } catch {
            var fields: [String: Any] = [
                "role": "connect", "error": error.description, "seconds": Date().timeIntervalSince(start),
            ]
            if case .connectFailed(_, _, let code) = error { fields["errno"] = Int(code) }
            ProbeOutput.result(fields)
            throw ExitCode(2)
        }
        let connected = Date()
        ProbeOutput.say("connected to \(peer) psm=\(ProbeOutput.psm(psm)) in \(ProbeOutput.seconds(connected.timeIntervalSince(start))): "
            + "send MTU \(channel.sendMTU), receive MTU \(channel.receiveMTU)")
        var granted = 0
        if receiveBuffer > 0 {
            var size = Int32(receiveBuffer)
            let fd = channel.descriptor.rawValue
            if setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &size, socklen_t(MemoryLayout<Int32>.size)) != 0 {
                _ = setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &size, socklen_t(MemoryLayout<Int32>.size))
            }
            var got: Int32 = 0
            var length = socklen_t(MemoryLayout<Int32>.size)
            _ = getsockopt(fd, SOL_SOCKET, SO_RCVBUF, &got, &length)
            granted = Int(got)
        }
        var io = SDUChannel(channel)
        defer { try? channel.descriptor.close() }
        var request = Array("HOP1".utf8)
        request += (0..<8).reversed().map { UInt8(truncatingIfNeeded: bytes >> ($0 * 8)) }
        request += (0..<4).reversed().map { UInt8(truncatingIfNeeded: answer >> ($0 * 8)) }
        try io.writeAll(request)
        let requested = Date()
        let check = try io.checkPattern(count: bytes, seed: 1, pause: readPauseMs > 0 ? (every: max(1, pauseEvery), milliseconds: readPauseMs) : nil)
        let received = Date()
        try io.writeAll(patternBytes: answer, seed: 2)
        let verdict = try io.readExactly(1)
        let first = check.firstByte ?? received
        let fields: [String: Any] = [
            "role": "connect", "psm": Int(psm), "send_mtu": channel.sendMTU, "recv_mtu": channel.receiveMTU,
            "connect_s": connected.timeIntervalSince(start),
            "first_byte_s": first.timeIntervalSince(start),
            "first_byte_after_request_s": first.timeIntervalSince(requested),
            "bytes": bytes, "intact": check.mismatch == nil, "sdus": check.reads,
            "receive_s": received.timeIntervalSince(requested),
            "kbit_s": Double(bytes) * 8 / 1000 / max(received.timeIntervalSince(requested), 1e-9),
            "answer_bytes": answer, "answer_intact": verdict == [1],
            "read_pause_ms": readPauseMs, "pause_every": pauseEvery, "receive_buffer": granted,
        ]
        ProbeOutput.result(fields)
        if let mismatch = check.mismatch {
            throw ProbeFailure("the bytes received differ at byte \(mismatch) (SDU \(check.mismatchRead ?? 0) of \(check.reads))")
        }
        guard verdict == [1] else { throw ProbeFailure("the listener found the answer damaged") }
    }
}
