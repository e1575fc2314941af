import CBluetooth
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The kernel's Bluetooth management interface (the HCI control channel),
/// as far as handoffd needs it: reading a controller's settings.
///
/// Any process may open the channel: without CAP_NET_ADMIN the socket is
/// untrusted, and Read Controller Information is one of the commands allowed
/// on untrusted sockets. Each query opens a socket of its own, sends one
/// command, waits (at most `timeout`) for its Command Complete or Command
/// Status, skipping the events the kernel sends to every listener meanwhile,
/// and closes the socket. The waiting is done on a thread of its own, never
/// on Swift's cooperative pool.
public enum ManagementChannel {
    /// Asks the kernel about controller `index` (`hci0` is 0).
    public static func readControllerInformation(
        index: UInt16, timeout: Duration = .seconds(1)
    ) async throws(ManagementError) -> ControllerInformation {
        let request = ControllerInformation.request(index: index)
        let answer = await onThreadOfItsOwn { () throws(ManagementError) -> [UInt8] in
            let socket = try openControlSocket()
            defer { close(socket) }
            return try exchange(request, on: socket, timeout: timeout)
        }
        return try ControllerInformation(returnParameters: answer.get())
    }

    /// Opens and binds a management socket.
    static func openControlSocket() throws(ManagementError) -> Int32 {
        let socket = Glibc.socket(
            CBLUETOOTH_AF_BLUETOOTH, Int32(SOCK_RAW.rawValue) | Int32(SOCK_CLOEXEC.rawValue), CBLUETOOTH_BTPROTO_HCI)
        guard socket >= 0 else {
            let error = errno
            throw error == EAFNOSUPPORT ? .kernelHasNoBluetooth : .system(call: "socket(AF_BLUETOOTH)", errno: error)
        }
        var address = cbluetooth_control_address()
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                bind(socket, $0, socklen_t(MemoryLayout<sockaddr_hci>.size))
            }
        }
        guard bound == 0 else {
            let error = errno
            close(socket)
            throw .system(call: "bind(HCI_CHANNEL_CONTROL)", errno: error)
        }
        return socket
    }

    /// Sends `request` on `socket` and returns the return parameters of its
    /// successful Command Complete. Blocks for at most `timeout`. Reads one
    /// packet per `read`, as a management socket (or a SOCK_SEQPACKET pair in
    /// tests) delivers them.
    static func exchange(_ request: ManagementPacket, on socket: Int32, timeout: Duration) throws(ManagementError)
        -> [UInt8]
    {
        let bytes = request.bytes
        let written = bytes.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
        guard written == bytes.count else {
            throw .system(call: "write(management command)", errno: written < 0 ? errno : EIO)
        }
        let clock = ContinuousClock()
        let deadline = clock.now + timeout
        var buffer = [UInt8](repeating: 0, count: ManagementPacket.headerLength + Int(UInt16.max))
        while true {
            let left = clock.now.duration(to: deadline)
            guard left > .zero else { throw .timedOut(seconds: timeout.inSeconds) }
            var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&descriptor, 1, left.pollMilliseconds)
            if ready < 0 {
                if errno == EINTR { continue }
                throw .system(call: "poll(management socket)", errno: errno)
            }
            if ready == 0 { continue }  // the deadline check above ends the wait
            let count = buffer.withUnsafeMutableBytes { read(socket, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR || errno == EAGAIN { continue }
                throw .system(call: "read(management socket)", errno: errno)
            }
            if count == 0 { throw .system(call: "read(management socket)", errno: ECONNRESET) }
            let packet = try ManagementPacket(bytes: buffer[..<count])
            guard packet.index == request.index else { continue }
            switch try ManagementEvent(packet) {
            case .commandComplete(let opcode, let status, let parameters) where opcode == request.code:
                guard status == .success else {
                    throw .commandFailed(opcode: opcode, index: request.index, status: status)
                }
                return parameters
            case .commandStatus(let opcode, let status) where opcode == request.code:
                throw .commandFailed(opcode: opcode, index: request.index, status: status)
            default:
                continue
            }
        }
    }

    /// Runs `body` on a new thread and resumes with its result.
    static func onThreadOfItsOwn<T: Sendable>(
        _ body: @escaping @Sendable () throws(ManagementError) -> T
    ) async -> Result<T, ManagementError> {
        await withCheckedContinuation { continuation in
            DetachedThread.start {
                continuation.resume(returning: Result { () throws(ManagementError) -> T in try body() })
            }
        }
    }
}
