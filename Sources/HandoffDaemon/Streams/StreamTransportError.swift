/// Why a `StreamTransport` could not listen, accept or connect. The messages name no secret.
enum StreamTransportError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Every PSM of 0x0080…0x00FF is taken on this adapter.
    case noFreePSM
    /// The listener was closed.
    case closed
    /// Nothing listens on that PSM of that peer (refused, or gone).
    case refused(psm: UInt16)
    /// The channel did not come up in time.
    case timedOut(psm: UInt16)
    /// The kernel has no Bluetooth (`socket(AF_BLUETOOTH)` fails with EAFNOSUPPORT), or the unit's
    /// `RestrictAddressFamilies` hides it.
    case noBluetooth
    /// A system call failed.
    case system(call: String, errno: Int32)

    var description: String {
        switch self {
        case .noFreePSM: "no free LE PSM in 0x0080…0x00ff"
        case .closed: "the stream listener is closed"
        case .refused(let psm): "the peer refused a stream channel on PSM 0x\(String(psm, radix: 16))"
        case .timedOut(let psm): "a stream channel on PSM 0x\(String(psm, radix: 16)) did not connect in time"
        case .noBluetooth: "this kernel has no Bluetooth (socket(AF_BLUETOOTH) fails with EAFNOSUPPORT): no LE L2CAP channel for streams"
        case .system(let call, let errno): "\(call) failed: errno \(errno)"
        }
    }
}
