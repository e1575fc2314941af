import Glibc
import Testing

@testable import BluetoothManagement

/// The exchange over a SOCK_SEQPACKET pair standing in for the kernel's
/// management socket (both keep packet boundaries, one packet per read), and
/// the real socket on this host.
@Suite struct ManagementChannelTests {
    /// Our end and the "kernel's" end, closed after `body`.
    private func withSocketPair<R>(_ body: (_ ours: Int32, _ kernel: Int32) async throws -> R) async throws -> R {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        return try await body(fds[0], fds[1])
    }

    private func send(_ bytes: [UInt8], to socket: Int32) {
        let written = bytes.withUnsafeBytes { write(socket, $0.baseAddress, $0.count) }
        #expect(written == bytes.count)
    }

    private func exchange(_ request: ManagementPacket, on socket: Int32, timeout: Duration = .seconds(1)) async
        -> Result<[UInt8], ManagementError>
    {
        await ManagementChannel.onThreadOfItsOwn { () throws(ManagementError) -> [UInt8] in
            try ManagementChannel.exchange(request, on: socket, timeout: timeout)
        }
    }

    @Test func skipsOtherEventsIndicesAndOpcodes() async throws {
        try await withSocketPair { ours, kernel in
            let info = ManagementVectors.controllerInformation()
            send(ManagementVectors.newSettings(index: 0, settings: 0x2211), to: kernel)
            send(ManagementVectors.commandComplete(opcode: 0x0001, index: 0, parameters: [1, 0]), to: kernel)
            send(ManagementVectors.commandComplete(opcode: 0x0004, index: 1, parameters: info), to: kernel)
            send(ManagementVectors.commandStatus(opcode: 0x0004, index: 1, status: 0x11), to: kernel)
            send(ManagementVectors.commandComplete(opcode: 0x0004, index: 0, parameters: info), to: kernel)
            let answer = try await exchange(ControllerInformation.request(index: 0), on: ours).get()
            #expect(try ControllerInformation(returnParameters: answer).privacy == .on)
            // The "kernel" got exactly the request.
            var request = [UInt8](repeating: 0, count: 64)
            let count = request.withUnsafeMutableBytes { read(kernel, $0.baseAddress, $0.count) }
            #expect(Array(request.prefix(max(count, 0))) == [0x04, 0x00, 0x00, 0x00, 0x00, 0x00])
        }
    }

    @Test func aCommandStatusForOurCommandIsItsFailure() async throws {
        try await withSocketPair { ours, kernel in
            send(ManagementVectors.commandStatus(opcode: 0x0004, index: 5, status: 0x11), to: kernel)
            let result = await exchange(ControllerInformation.request(index: 5), on: ours)
            let expected = ManagementError.commandFailed(opcode: 4, index: 5, status: .invalidIndex)
            #expect(result == .failure(expected))
            #expect(expected.description == "the kernel has no controller hci5")
        }
    }

    @Test func aFailedCommandCompleteIsAFailure() async throws {
        try await withSocketPair { ours, kernel in
            send(ManagementVectors.commandComplete(opcode: 0x0004, index: 0, status: 0x0B, parameters: []), to: kernel)
            let result = await exchange(ControllerInformation.request(index: 0), on: ours)
            #expect(result == .failure(.commandFailed(opcode: 4, index: 0, status: .rejected)))
        }
    }

    @Test func noAnswerTimesOut() async throws {
        try await withSocketPair { ours, kernel in
            // Only unrelated traffic: the wait must still end.
            send(ManagementVectors.newSettings(index: 0, settings: 1), to: kernel)
            let result = await exchange(ControllerInformation.request(index: 0), on: ours, timeout: .milliseconds(150))
            #expect(result == .failure(.timedOut(seconds: 0.15)))
        }
    }

    @Test func garbageFromTheKernelIsMalformedNotACrash() async throws {
        try await withSocketPair { ours, kernel in
            send([0x01, 0x00, 0x00], to: kernel)
            let result = await exchange(ControllerInformation.request(index: 0), on: ours)
            guard case .failure(.malformed) = result else {
                Issue.record("expected malformed, got \(result)")
                return
            }
        }
    }

    /// On this host (a kernel without Bluetooth) the real query must say so; on a
    /// host with Bluetooth it must reach the kernel and be told that a controller
    /// index nobody has does not exist.
    @Test func theRealKernelAnswersOrSaysItHasNoBluetooth() async throws {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1 /* BTPROTO_HCI */)
        let probeErrno = errno
        if probe >= 0 { close(probe) }
        let absent: UInt16 = 0x7FFE
        do {
            let info = try await ManagementChannel.readControllerInformation(index: absent)
            Issue.record("hci\(absent) exists?? \(info.address)")
        } catch {
            if probe < 0 && probeErrno == EAFNOSUPPORT {
                #expect(error == .kernelHasNoBluetooth)
                #expect(error.description == "this kernel has no Bluetooth support: socket(AF_BLUETOOTH) fails with EAFNOSUPPORT")
            } else {
                #expect(error == .commandFailed(opcode: 4, index: absent, status: .invalidIndex))
            }
        }
    }
}
