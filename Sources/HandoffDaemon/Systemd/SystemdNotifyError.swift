/// Why a notification could not be sent to systemd.
public enum SystemdNotifyError: Error, Sendable, Equatable, CustomStringConvertible {
    /// `NOTIFY_SOCKET` is neither a path nor an abstract socket (`@name`),
    /// for example a `vsock:` address, which this implementation does not speak.
    case unsupportedAddress(String)
    /// `NOTIFY_SOCKET` does not fit in a socket address.
    case addressTooLong(String)
    /// A system call failed: which one, and errno.
    case system(call: String, errno: Int32)

    public var description: String {
        switch self {
        case .unsupportedAddress(let address):
            "NOTIFY_SOCKET=\(address) is not a path or an abstract socket"
        case .addressTooLong(let address):
            "NOTIFY_SOCKET=\(address) is too long for a socket address"
        case .system(let call, let code):
            "sd_notify: \(call) failed with errno \(code)"
        }
    }
}
