#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import Glibc
import HandoffCore
import SystemPackage

/// The stand-in for LE L2CAP channels over the simulator (test and demo only; docs/continuation.md, section
/// 10.6, and Config/handoffd.toml `[streams] local_directory`): `AF_UNIX` `SOCK_SEQPACKET` sockets in one
/// directory, named `ADDRESS-PSM` after the listening adapter's address and the PSM (`AA:BB:CC:DD:EE:01-0080`).
/// A channel behaves as an L2CAP one for the relays: one write is one record of at most `sendUnit` bytes, one
/// read returns one record. The directory keeps other local users out only as far as its own permissions do.
///
/// The directory stands for one air: over the simulator the continuing side knows the origin only by its
/// advertising address, which is random and not the adapter's, so a PSM is taken by at most one laptop in the
/// directory, and `connect` reaches the PSM's one listener whatever the peer's address (the exact
/// `ADDRESS-PSM` first).
struct LocalStreamTransport: StreamTransport {
    /// The directory holding the sockets; both daemons of a test name the same one.
    let directory: String
    /// This laptop's adapter address (the name of its listening sockets).
    let adapterAddress: String
    /// The largest record a channel writes (the L2CAP send MTU it stands in for).
    let sendUnit: Int

    init(directory: String, adapterAddress: String, sendUnit: Int = StreamFormat.maximumFrameLength) {
        self.directory = directory
        self.adapterAddress = adapterAddress
        self.sendUnit = sendUnit
    }

    func path(address: String, psm: UInt16) -> String {
        directory + "/" + address.uppercased() + "-" + Self.hex4(psm)
    }

    func listen() async throws -> any StreamTransportListener {
        for psm in StreamFormat.psmRange where holders(of: psm).allSatisfy({ $0 == path(address: adapterAddress, psm: psm) }) {
            let path = path(address: adapterAddress, psm: psm)
            let descriptor = try Self.socket()
            do {
                if try Self.bind(descriptor, to: path) {
                    guard Glibc.listen(descriptor, 8) == 0 else { throw Self.failure("listen") }
                    return try LocalStreamListener(descriptor: descriptor, path: path, psm: psm, sendUnit: sendUnit)
                }
            } catch {
                _ = Glibc.close(descriptor)
                throw error
            }
            _ = Glibc.close(descriptor)
        }
        throw StreamTransportError.noFreePSM
    }

    func connect(to peer: StreamPeer, psm: UInt16, timeout: Duration) async throws -> StreamTransportChannel {
        var target = path(address: peer.address, psm: psm)
        if access(target, F_OK) != 0 {
            let others = holders(of: psm).filter { $0 != path(address: adapterAddress, psm: psm) }
            if others.count == 1 { target = others[0] }
        }
        let descriptor = try Self.socket()
        let result = try Self.withAddress(target) { Glibc.connect(descriptor, $0, $1) }
        guard result == 0 else {
            let code = errno
            _ = Glibc.close(descriptor)
            switch code {
            case ECONNREFUSED, ENOENT: throw StreamTransportError.refused(psm: psm)
            case ETIMEDOUT: throw StreamTransportError.timedOut(psm: psm)
            default: throw StreamTransportError.system(call: "connect", errno: code)
            }
        }
        return StreamTransportChannel(descriptor: FileDescriptor(rawValue: descriptor), sendUnit: sendUnit)
    }

    /// The socket files of the directory that hold `psm`, for any address.
    func holders(of psm: UInt16) -> [String] {
        let suffix = "-" + Self.hex4(psm)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        return names.filter { $0.hasSuffix(suffix) }.sorted().map { directory + "/" + $0 }
    }

    static func socket() throws -> Int32 {
        let descriptor = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard descriptor >= 0 else { throw failure("socket") }
        return descriptor
    }

    /// Binds `descriptor` to `path`; false when a live socket holds the path. A stale socket file (nothing
    /// accepts on it: its daemon ended without removing it) is removed and the path taken.
    static func bind(_ descriptor: Int32, to path: String) throws -> Bool {
        if try withAddress(path, { Glibc.bind(descriptor, $0, $1) }) == 0 { return true }
        guard errno == EADDRINUSE else { throw failure("bind") }
        let probe = try socket()
        defer { _ = Glibc.close(probe) }
        guard try withAddress(path, { Glibc.connect(probe, $0, $1) }) != 0, errno == ECONNREFUSED else { return false }
        _ = unlink(path)
        if try withAddress(path, { Glibc.bind(descriptor, $0, $1) }) == 0 { return true }
        guard errno == EADDRINUSE else { throw failure("bind") }
        return false
    }

    /// Calls `body` with the `sockaddr_un` of `path`.
    /// - Throws: `StreamTransportError.system(call: "socket path", errno: ENAMETOOLONG)` for a path over 107 bytes.
    static func withAddress<R>(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> R) throws -> R {
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(path.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            throw StreamTransportError.system(call: "socket path", errno: ENAMETOOLONG)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            raw.copyBytes(from: bytes)
        }
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
    }

    /// Four lowercase hex digits.
    static func hex4(_ value: UInt16) -> String {
        let digits = String(value, radix: 16)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func failure(_ call: String) -> StreamTransportError { .system(call: call, errno: errno) }
}
