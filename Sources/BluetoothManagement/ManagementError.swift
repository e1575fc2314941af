/// Why the management interface could not answer.
public enum ManagementError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `socket(AF_BLUETOOTH, …)` failed with EAFNOSUPPORT: the kernel has no
    /// Bluetooth (or a sandbox's RestrictAddressFamilies hides it, which looks the same).
    case kernelHasNoBluetooth
    /// A system call failed: which one, and errno.
    case system(call: String, errno: Int32)
    /// The kernel answered the command with a failure (Invalid Index: no such controller).
    case commandFailed(opcode: UInt16, index: UInt16, status: ManagementStatus)
    /// No answer within the time limit.
    case timedOut(seconds: Double)
    /// The kernel's answer could not be read.
    case malformed(String)

    public var description: String {
        switch self {
        case .kernelHasNoBluetooth:
            "this kernel has no Bluetooth support: socket(AF_BLUETOOTH) fails with EAFNOSUPPORT"
        case .system(let call, let errno):
            "\(call) failed: \(Self.message(errno)) (errno \(errno))"
        case .commandFailed(let opcode, let index, let status):
            status == .invalidIndex
                ? "the kernel has no controller hci\(index)"
                : "management command 0x\(String(opcode, radix: 16)) for hci\(index) failed: \(status)"
        case .timedOut(let seconds):
            "the kernel's management interface did not answer within \(seconds) s"
        case .malformed(let why):
            "unreadable answer from the kernel's management interface: \(why)"
        }
    }

    private static func message(_ errno: Int32) -> String {
        guard let text = strerror(errno) else { return "unknown error" }
        return String(cString: text)
    }
}

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
