import ArgumentParser
import BluetoothManagement
import Foundation

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
