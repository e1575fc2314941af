import ArgumentParser
import BluetoothManagement
import Foundation

/// O's side: listen on a dynamic PSM, serve one channel.
struct Listen: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Listens on a dynamic PSM (printed), serves one channel, checks the answer.")
    @OptionGroup var local: Local
    @Option(help: "Also write the PSM (decimal) to this file once listening.")
    var psmFile: String?

    func run() async throws {
        let listener = try L2CAPListener.listen(on: local.address(), receiveMTU: local.mtu)
        defer { listener.close() }
        ProbeOutput.say("listening on \(local.local) (\(local.localType)) psm=\(ProbeOutput.psm(listener.psm))")
        if let psmFile { try "\(listener.psm)\n".write(toFile: psmFile, atomically: true, encoding: .utf8) }
        let channel = try await listener.accept()
        let accepted = Date()
        ProbeOutput.say("accepted \(channel.peer?.description ?? "?"): send MTU \(channel.sendMTU), receive MTU \(channel.receiveMTU)")
        var io = SDUChannel(channel)
        defer { try? channel.descriptor.close() }
        let request = try io.readExactly(16)
        guard request.prefix(4).elementsEqual(Array("HOP1".utf8)) else { throw ProbeFailure("not a probe request") }
        let count = request[4..<12].reduce(0) { $0 << 8 | Int($1) }
        let answer = request[12..<16].reduce(0) { $0 << 8 | Int($1) }
        let sendStart = Date()
        try io.writeAll(patternBytes: count, seed: 1)
        let sent = Date()
        let intact = try io.checkPattern(count: answer, seed: 2)
        try io.writeAll([intact.mismatch == nil ? 1 : 0])
        let done = Date()
        let eof = try io.readToEnd()
        ProbeOutput.result([
            "role": "listen", "psm": Int(listener.psm), "send_mtu": channel.sendMTU, "recv_mtu": channel.receiveMTU,
            "sent_bytes": count, "send_s": sent.timeIntervalSince(sendStart), "answer_bytes": answer,
            "answer_intact": intact.mismatch == nil, "answer_first_byte_s": intact.firstByte?.timeIntervalSince(sent) ?? -1,
            "total_s": done.timeIntervalSince(accepted), "trailing_bytes": eof,
        ])
        if let mismatch = intact.mismatch { throw ProbeFailure("the answer differs at byte \(mismatch)") }
    }
}
