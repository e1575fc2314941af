#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// The address in `NOTIFY_SOCKET`: a filesystem path, or a Linux abstract
/// socket name written with a leading `@`.
struct NotifySocketAddress: Sendable, Equatable {
    /// The bytes of `sun_path`, without padding. For an abstract socket the
    /// first byte is 0 and there is no terminator; a path ends with its 0.
    let pathBytes: [UInt8]

    /// Parses `NOTIFY_SOCKET`.
    init(_ text: String) throws(SystemdNotifyError) {
        var bytes = Array(text.utf8)
        switch bytes.first {
        case UInt8(ascii: "/"):
            bytes.append(0)
        case UInt8(ascii: "@"):
            bytes[0] = 0
            guard bytes.count > 1 else { throw .unsupportedAddress(text) }
        default:
            throw .unsupportedAddress(text)
        }
        guard bytes.count <= MemoryLayout.size(ofValue: sockaddr_un().sun_path) else {
            throw .addressTooLong(text)
        }
        pathBytes = bytes
    }

    /// Calls `body` with the address as a `sockaddr` and its exact length.
    func withSocketAddress<R>(_ body: (UnsafePointer<sockaddr>, socklen_t) -> R) -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: pathBytes)
        }
        let length = MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathBytes.count
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(length)) }
        }
    }
}
