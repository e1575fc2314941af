#if canImport(Glibc)
import Glibc
#endif
import Foundation

/// A datagram socket standing in for systemd's notification socket.
public final class NotifySocket {
    public let fd: Int32
    /// The value systemd would put in NOTIFY_SOCKET.
    public let address: String
    private let directory: String?

    /// Binds a socket at a path in a new temporary directory.
    public init() throws {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("handoff-notify-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        self.directory = directory
        address = "\(directory)/notify"
        fd = try Self.bind(Array(address.utf8) + [0])
    }

    /// Binds an abstract socket (NOTIFY_SOCKET=@name).
    public init(abstract name: String) throws {
        directory = nil
        address = "@\(name)"
        fd = try Self.bind([0] + Array(name.utf8))
    }

    deinit {
        close(fd)
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    private static func bind(_ pathBytes: [UInt8]) throws -> Int32 {
        let fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno)!) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: pathBytes) }
        let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + pathBytes.count)
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.bind(fd, $0, length) }
        }
        guard result == 0 else {
            let code = errno
            close(fd)
            throw POSIXError(POSIXErrorCode(rawValue: code)!)
        }
        return fd
    }

    /// The next datagram, or nil when none arrives within `timeout` milliseconds.
    public func receive(timeout: Int32 = 2000) -> String? {
        var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&poller, 1, timeout) == 1 else { return nil }
        var buffer = [UInt8](repeating: 0, count: 4096)
        let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard count >= 0 else { return nil }
        return String(decoding: buffer[..<count], as: UTF8.self)
    }

    /// Every datagram already queued.
    public func drain() -> [String] {
        var messages: [String] = []
        while let message = receive(timeout: 0) { messages.append(message) }
        return messages
    }
}
