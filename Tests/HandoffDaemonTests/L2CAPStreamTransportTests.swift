import Glibc
import Testing

@testable import HandoffDaemon

/// The real stream transport (`L2CAPStreamTransport`) where it can be tested without Bluetooth: what it
/// says on a kernel without it, and how it maps the L2CAP errors. The channels themselves are proved on the
/// VM rig (`scripts/bench-l2cap.sh`).
@Suite struct L2CAPStreamTransportTests {
    /// True when this kernel has no `AF_BLUETOOTH` (the CI host and the sandboxes).
    static var kernelHasNoBluetooth: Bool {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue), 0)
        if probe >= 0 { close(probe) }
        return probe < 0 && errno == EAFNOSUPPORT
    }

    @Test(.enabled(if: kernelHasNoBluetooth))
    func listeningOnAKernelWithoutBluetoothIsAClearError() async throws {
        let transport = try L2CAPStreamTransport(adapterAddress: "AA:BB:CC:DD:EE:01", addressType: "public")
        let error = await #expect(throws: StreamTransportError.self) { _ = try await transport.listen() }
        #expect(error == .noBluetooth)
        #expect(error?.description.contains("no Bluetooth") == true)
        let peer = StreamPeer(adapterAddress: "AA:BB:CC:DD:EE:01", address: "AA:BB:CC:DD:EE:02", addressType: "random")
        let connecting = await #expect(throws: StreamTransportError.self) {
            _ = try await transport.connect(to: peer, psm: 0x0080, timeout: .seconds(1))
        }
        #expect(connecting == .noBluetooth)
    }

    @Test func aBadAdapterAddressIsRefusedAtOnce() {
        #expect(throws: StreamTransportError.self) {
            _ = try L2CAPStreamTransport(adapterAddress: "AA:BB:CC", addressType: "public")
        }
        #expect(throws: StreamTransportError.self) {
            _ = try L2CAPStreamTransport(adapterAddress: "AA:BB:CC:DD:EE:01", addressType: "bredr")
        }
    }

    @Test func l2capErrorsMapToTheSeamsErrors() {
        #expect(L2CAPStreamTransport.map(.kernelHasNoBluetooth, psm: 0x80) == .noBluetooth)
        #expect(L2CAPStreamTransport.map(.connectFailed(peer: "x", psm: 0x81, errno: ECONNREFUSED), psm: 0x81) == .refused(psm: 0x81))
        #expect(L2CAPStreamTransport.map(.timedOut(peer: "x", psm: 0x82, seconds: 1), psm: 0x82) == .timedOut(psm: 0x82))
        #expect(L2CAPStreamTransport.map(.closed, psm: 0x83) == .closed)
    }
}

/// `[streams] local_directory` picks the transport.
@Suite struct StreamTransportSelectionTests {
    @Test func theDefaultIsL2CAPAndADirectorySelectsTheStandIn() throws {
        var settings = DaemonSettings()
        let real = try settings.streamTransport(adapterAddress: "AA:BB:CC:DD:EE:01", addressType: "public")
        #expect((real as? L2CAPStreamTransport)?.adapter.text == "AA:BB:CC:DD:EE:01")
        settings.streamsLocalDirectory = "/tmp/streams"
        let local = try settings.streamTransport(adapterAddress: "AA:BB:CC:DD:EE:01", addressType: "public")
        #expect((local as? LocalStreamTransport)?.directory == "/tmp/streams")
    }
}
