import Foundation
import Glibc
import SystemPackage
import Testing

@testable import BluetoothManagement

/// The listener's accept and close over a listening Unix SOCK_SEQPACKET socket standing in for
/// the L2CAP one (the host has no Bluetooth; the real socket is proved on the VM rig).
@Suite struct L2CAPListenerTests {
    private struct UnixListener {
        let listener: L2CAPListener
        let path: String
    }

    private func makeListener() throws -> UnixListener {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("l2cap-\(UUID().uuidString).sock").path
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        try #require(socket >= 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && Glibc.listen(socket, 4) == 0)
        let listener = try L2CAPListener(socket: socket, psm: 0x0080, local: nil) { descriptor, _ in
            L2CAPChannel(descriptor: FileDescriptor(rawValue: descriptor), sendMTU: 2048, receiveMTU: 2048, peer: nil)
        }
        return UnixListener(listener: listener, path: path)
    }

    private func connect(to path: String) throws -> Int32 {
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: path.utf8) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        try #require(connected == 0)
        return socket
    }

    @Test func acceptsAChannelThatArrivesWhileWaiting() async throws {
        let unix = try makeListener()
        defer {
            unix.listener.close()
            unlink(unix.path)
        }
        async let accepted = unix.listener.accept()
        try await Task.sleep(for: .milliseconds(20))  // let accept wait first (either order must work)
        let client = try connect(to: unix.path)
        defer { close(client) }
        let channel = try await accepted
        defer { try? channel.descriptor.close() }
        #expect(write(client, "hello", 5) == 5)
        var buffer = [UInt8](repeating: 0, count: 16)
        let count = try buffer.withUnsafeMutableBytes { try channel.descriptor.read(into: $0) }
        #expect(Array(buffer.prefix(count)) == Array("hello".utf8))
    }

    @Test func closeWakesAWaitingAcceptAndRefusesLaterOnes() async throws {
        let unix = try makeListener()
        defer { unlink(unix.path) }
        let waiting = Task { () async throws(L2CAPError) -> L2CAPChannel in try await unix.listener.accept() }
        try await Task.sleep(for: .milliseconds(20))
        unix.listener.close()
        #expect(await waiting.result.mapError { $0 as! L2CAPError } .failureValue == .closed)
        await #expect(throws: L2CAPError.closed) { _ = try await unix.listener.accept() }
        // The socket is closed: nobody can connect any more.
        let socket = Glibc.socket(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0)
        defer { close(socket) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: unix.path.utf8) }
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        #expect(connected == -1 && errno == ECONNREFUSED)
    }

    @Test func cancellingAnAcceptLeavesTheListenerServing() async throws {
        let unix = try makeListener()
        defer {
            unix.listener.close()
            unlink(unix.path)
        }
        let waiting = Task { () async throws(L2CAPError) -> L2CAPChannel in try await unix.listener.accept() }
        try await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        #expect(await waiting.result.mapError { $0 as! L2CAPError } .failureValue == .cancelled)
        let client = try connect(to: unix.path)
        defer { close(client) }
        let channel = try await unix.listener.accept()
        try channel.descriptor.close()
    }
}

extension Result {
    fileprivate var failureValue: Failure? {
        if case .failure(let failure) = self { return failure }
        return nil
    }
}
