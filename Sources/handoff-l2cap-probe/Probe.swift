import ArgumentParser
import BluetoothManagement
import Foundation
import SystemPackage

#if canImport(Glibc)
import Glibc
#endif

/// handoff-l2cap-probe: the LE L2CAP channel on real Bluetooth, for the VM rig
/// (Tests/e2e/guest-l2cap.sh, scripts/bench-l2cap.sh). A dev and test tool: never installed.
///
/// The exchange, after the channel is up (C connects, O listens, as in docs/continuation.md
/// section 10.6): C sends a 16-byte request ("HOP1", the byte count N for O, the byte count
/// M for C's answer, both big-endian, N in 8 bytes and M in 4); O writes N bytes; C checks
/// them byte for byte and writes M bytes; O checks those and writes one verdict byte (1: all
/// intact, 0: not); both close. Bytes are a pseudo-random sequence (xorshift) that both sides
/// compute, so a lost, repeated or reordered SDU shows. Every write is one SDU of at most the
/// send MTU. Each side ends with one line `RESULT {json}`.
@main
struct Probe: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff-l2cap-probe",
        abstract: "Opens an LE L2CAP channel on a dynamic PSM and measures it (test tool).",
        subcommands: [Listen.self, Connect.self])
}

struct Local: ParsableArguments {
    @Option(help: "The local adapter's identity address (Adapter1.Address).")
    var local: String
    @Option(help: "Its type, public or random (Adapter1.AddressType).")
    var localType: String = "public"
    @Option(help: "Our receive MTU (the peer's send MTU).")
    var mtu: Int = 2048

    func address() throws -> LEAddress { try LEAddress(local, type: localType) }
}

struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Listens on a dynamic PSM (printed), serves one channel, checks the answer.")
    @OptionGroup var local: Local
    @Option(help: "Also write the PSM (decimal) to this file once listening.")
    var psmFile: String?

    func run() async throws {
        let listener = try L2CAPListener.listen(on: local.address(), receiveMTU: local.mtu)
        defer { listener.close() }
        say("listening on \(local.local) (\(local.localType)) psm=\(L2CAPHex.psm(listener.psm))")
        if let psmFile { try "\(listener.psm)\n".write(toFile: psmFile, atomically: true, encoding: .utf8) }
        let channel = try await listener.accept()
        let accepted = Date()
        say("accepted \(channel.peer?.description ?? "?"): send MTU \(channel.sendMTU), receive MTU \(channel.receiveMTU)")
        var io = SDUChannel(channel)
        defer { try? channel.descriptor.close() }
        let request = try io.readExactly(16)
        guard request.prefix(4).elementsEqual(Array("HOP1".utf8)) else { throw ProbeFailure("not a probe request") }
        let count = request[4..<12].reduce(0) { $0 << 8 | Int($1) }
        let answer = request[12..<16].reduce(0) { $0 << 8 | Int($1) }
        let sendStart = Date()
        try io.writePattern(count: count, seed: 1)
        let sent = Date()
        let intact = try io.checkPattern(count: answer, seed: 2)
        try io.writeAll([intact.mismatch == nil ? 1 : 0])
        let done = Date()
        let eof = try io.readToEnd()
        result([
            "role": "listen", "psm": Int(listener.psm), "send_mtu": channel.sendMTU, "recv_mtu": channel.receiveMTU,
            "sent_bytes": count, "send_s": sent.timeIntervalSince(sendStart), "answer_bytes": answer,
            "answer_intact": intact.mismatch == nil, "answer_first_byte_s": intact.firstByte?.timeIntervalSince(sent) ?? -1,
            "total_s": done.timeIntervalSince(accepted), "trailing_bytes": eof,
        ])
        if let mismatch = intact.mismatch { throw ProbeFailure("the answer differs at byte \(mismatch)") }
    }
}

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
            result(fields)
            throw ExitCode(2)
        }
        let connected = Date()
        say("connected to \(peer) psm=\(L2CAPHex.psm(psm)) in \(seconds(connected.timeIntervalSince(start))): "
            + "send MTU \(channel.sendMTU), receive MTU \(channel.receiveMTU)")
        var io = SDUChannel(channel)
        defer { try? channel.descriptor.close() }
        var request = Array("HOP1".utf8)
        request += (0..<8).reversed().map { UInt8(truncatingIfNeeded: bytes >> ($0 * 8)) }
        request += (0..<4).reversed().map { UInt8(truncatingIfNeeded: answer >> ($0 * 8)) }
        try io.writeAll(request)
        let requested = Date()
        let check = try io.checkPattern(count: bytes, seed: 1)
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
        ]
        result(fields)
        if let mismatch = check.mismatch { throw ProbeFailure("the bytes received differ at byte \(mismatch)") }
        guard verdict == [1] else { throw ProbeFailure("the listener found the answer damaged") }
    }
}

struct ProbeFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

enum L2CAPHex {
    static func psm(_ psm: UInt16) -> String { String(format: "0x%04x", psm) }
}

func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }

func say(_ line: String) {
    FileHandle.standardError.write(Data("probe: \(line)\n".utf8))
}

func result(_ fields: [String: Any]) {
    let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
    FileHandle.standardOutput.write(Data("RESULT ".utf8) + data + Data("\n".utf8))
}
