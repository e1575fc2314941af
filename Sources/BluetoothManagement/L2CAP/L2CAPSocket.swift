import CBluetooth
import SystemPackage

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif

/// The system calls both sides share: an LE L2CAP SOCK_SEQPACKET socket bound to the
/// adapter's identity address, with LE credit-based flow control, security level low
/// and our receive MTU.
enum L2CAPSocket {
    /// The LE dynamic PSM range (Core 5.3, Vol 3, Part A, 4.22).
    static let dynamicPSMs: ClosedRange<UInt16> = 0x0080...0x00FF

    static func address(_ address: LEAddress, psm: UInt16) -> sockaddr_l2 {
        let type = address.kind == .public ? CBLUETOOTH_BDADDR_LE_PUBLIC : CBLUETOOTH_BDADDR_LE_RANDOM
        return address.bytes.withUnsafeBufferPointer { cbluetooth_l2cap_address($0.baseAddress, psm, type) }
    }

    static func psm(of address: sockaddr_l2) -> UInt16 {
        var copy = address
        return cbluetooth_l2cap_psm(&copy)
    }

    static func leAddress(_ address: sockaddr_l2) -> LEAddress? {
        var copy = address
        var bytes = [UInt8](repeating: 0, count: 6)
        bytes.withUnsafeMutableBufferPointer { cbluetooth_l2cap_address_bytes(&copy, $0.baseAddress) }
        switch address.l2_bdaddr_type {
        case CBLUETOOTH_BDADDR_LE_PUBLIC: return LEAddress(bytes: bytes, kind: .public)
        case CBLUETOOTH_BDADDR_LE_RANDOM: return LEAddress(bytes: bytes, kind: .random)
        default: return nil
        }
    }

    /// A new non-blocking socket bound to `local` (PSM 0 on a listener: the kernel picks a
    /// free dynamic LE PSM; on a connecting socket it only reserves one, as BlueZ's l2test
    /// does), with our options set. Closed again if anything fails.
    static func open(boundTo local: LEAddress, receiveMTU: Int) throws(L2CAPError) -> Int32 {
        guard (23...Int(UInt16.max)).contains(receiveMTU) else {
            throw .system(call: "setsockopt(BT_RCVMTU \(receiveMTU)): LE CoC MTUs are 23…65535", errno: EINVAL)
        }
        let socket = Glibc.socket(
            CBLUETOOTH_AF_BLUETOOTH,
            Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
            CBLUETOOTH_BTPROTO_L2CAP)
        guard socket >= 0 else {
            let error = errno
            throw error == EAFNOSUPPORT ? .kernelHasNoBluetooth : .system(call: "socket(AF_BLUETOOTH, L2CAP)", errno: error)
        }
        do throws(L2CAPError) {
            var address = address(local, psm: 0)
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    bind(socket, $0, socklen_t(MemoryLayout<sockaddr_l2>.size))
                }
            }
            guard bound == 0 else { throw .system(call: "bind(L2CAP, \(local))", errno: errno) }
            // Security level low: no pairing, no link encryption; the frames are sealed (section 10).
            var security = bt_security(level: CBLUETOOTH_BT_SECURITY_LOW, key_size: 0)
            try set(socket, CBLUETOOTH_BT_SECURITY, &security, "BT_SECURITY low")
            // A socket bound to an LE address already uses LE credit-based flow control; BT_MODE
            // says so explicitly where the kernel offers it (it needs bluetooth.enable_ecred on
            // Linux 5.11 to 6.x: ENOPROTOOPT otherwise, which changes nothing).
            var mode = CBLUETOOTH_BT_MODE_LE_FLOWCTL
            do throws(L2CAPError) {
                try set(socket, CBLUETOOTH_BT_MODE, &mode, "BT_MODE LE_FLOWCTL")
            } catch .system(_, let error) where error == ENOPROTOOPT {
            }
            var mtu = UInt16(receiveMTU)
            try set(socket, CBLUETOOTH_BT_RCVMTU, &mtu, "BT_RCVMTU \(receiveMTU)")
            return socket
        } catch {
            Glibc.close(socket)
            throw error
        }
    }

    static func set<T: BitwiseCopyable>(_ socket: Int32, _ option: Int32, _ value: inout T, _ what: String) throws(L2CAPError) {
        let result = setsockopt(socket, CBLUETOOTH_SOL_BLUETOOTH, option, &value, socklen_t(MemoryLayout<T>.size))
        guard result == 0 else { throw .system(call: "setsockopt(\(what))", errno: errno) }
    }

    static func mtu(_ socket: Int32, _ option: Int32, _ what: String) throws(L2CAPError) -> Int {
        var value: UInt16 = 0
        var length = socklen_t(MemoryLayout<UInt16>.size)
        guard getsockopt(socket, CBLUETOOTH_SOL_BLUETOOTH, option, &value, &length) == 0 else {
            throw .system(call: "getsockopt(\(what))", errno: errno)
        }
        return Int(value)
    }

    /// The connected socket `socket` as a channel: blocking again, with its MTUs.
    /// Closes `socket` if anything fails.
    static func channel(_ socket: Int32, peer: LEAddress?) throws(L2CAPError) -> L2CAPChannel {
        do throws(L2CAPError) {
            let flags = fcntl(socket, F_GETFL)
            guard flags >= 0, fcntl(socket, F_SETFL, flags & ~O_NONBLOCK) == 0 else {
                throw .system(call: "fcntl(O_NONBLOCK off)", errno: errno)
            }
            let send = try mtu(socket, CBLUETOOTH_BT_SNDMTU, "BT_SNDMTU")
            let receive = try mtu(socket, CBLUETOOTH_BT_RCVMTU, "BT_RCVMTU")
            return L2CAPChannel(descriptor: FileDescriptor(rawValue: socket), sendMTU: send, receiveMTU: receive, peer: peer)
        } catch {
            Glibc.close(socket)
            throw error
        }
    }
}
