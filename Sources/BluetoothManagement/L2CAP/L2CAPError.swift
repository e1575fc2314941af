#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// Why an LE L2CAP channel could not be listened on, accepted or connected.
/// Messages name the call and the errno's meaning; they never hold channel data.
public enum L2CAPError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `socket(AF_BLUETOOTH, …)` failed with EAFNOSUPPORT: the kernel has no Bluetooth
    /// (or a sandbox's RestrictAddressFamilies hides it, which looks the same).
    case kernelHasNoBluetooth
    /// An address or address type that cannot be used.
    case invalidAddress(String)
    /// A PSM outside the LE dynamic range 0x0080…0x00FF.
    case psmOutOfRange(UInt16)
    /// A system call failed: which one, and errno.
    case system(call: String, errno: Int32)
    /// The connection to `psm` at `peer` failed with errno (ECONNREFUSED: nobody listens there).
    case connectFailed(peer: String, psm: UInt16, errno: Int32)
    /// No connection within the time limit.
    case timedOut(peer: String, psm: UInt16, seconds: Double)
    /// The listener was closed (before or while accepting).
    case closed
    /// The task waiting for the channel was cancelled.
    case cancelled

    public var description: String {
        switch self {
        case .kernelHasNoBluetooth:
            "this kernel has no Bluetooth support: socket(AF_BLUETOOTH) fails with EAFNOSUPPORT"
        case .invalidAddress(let why):
            "invalid LE address: \(why)"
        case .psmOutOfRange(let psm):
            "PSM \(Self.hex(psm)) is outside the LE dynamic range 0x0080…0x00FF"
        case .system(let call, let errno):
            "\(call) failed: \(Self.explain(errno))"
        case .connectFailed(let peer, let psm, let errno):
            switch errno {
            case ECONNREFUSED:
                "connecting to PSM \(Self.hex(psm)) at \(peer) was refused: nothing listens there (\(Self.explain(errno)))"
            case EHOSTUNREACH:
                "connecting to PSM \(Self.hex(psm)) at \(peer) failed: no powered LE controller has the local address"
                    + " (\(Self.explain(errno)))"
            default:
                "connecting to PSM \(Self.hex(psm)) at \(peer) failed: \(Self.explain(errno))"
            }
        case .timedOut(let peer, let psm, let seconds):
            "connecting to PSM \(Self.hex(psm)) at \(peer) did not complete within \(seconds) s"
        case .closed:
            "the L2CAP listener is closed"
        case .cancelled:
            "waiting for the L2CAP channel was cancelled"
        }
    }

    /// "Connection refused (ECONNREFUSED, errno 111)".
    static func explain(_ errno: Int32) -> String {
        let text = strerror(errno).map { String(cString: $0) } ?? "unknown error"
        if let name = names[errno] { return "\(text) (\(name), errno \(errno))" }
        return "\(text) (errno \(errno))"
    }

    static func hex(_ psm: UInt16) -> String {
        let digits = String(psm, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    private static let names: [Int32: String] = [
        EACCES: "EACCES", EADDRINUSE: "EADDRINUSE", EADDRNOTAVAIL: "EADDRNOTAVAIL",
        EAFNOSUPPORT: "EAFNOSUPPORT", EAGAIN: "EAGAIN", EBADF: "EBADF", EBADFD: "EBADFD", EBUSY: "EBUSY",
        ECONNABORTED: "ECONNABORTED", ECONNREFUSED: "ECONNREFUSED", ECONNRESET: "ECONNRESET",
        EHOSTDOWN: "EHOSTDOWN", EHOSTUNREACH: "EHOSTUNREACH", EINPROGRESS: "EINPROGRESS", EINVAL: "EINVAL",
        EIO: "EIO", EISCONN: "EISCONN", EMSGSIZE: "EMSGSIZE", ENOMEM: "ENOMEM", ENOPROTOOPT: "ENOPROTOOPT",
        ENOTCONN: "ENOTCONN", EOPNOTSUPP: "EOPNOTSUPP", EPERM: "EPERM", EPROTONOSUPPORT: "EPROTONOSUPPORT",
        ETIMEDOUT: "ETIMEDOUT",
    ]
}
