import Glibc
import Testing

@testable import BluetoothManagement

/// What runs without Bluetooth: the kernel's address layout, the errors, and what opening a
/// channel does on a kernel without AF_BLUETOOTH (as on the build hosts).
@Suite struct L2CAPSocketTests {
    @Test func theAddressIsInTheKernelsLayout() throws {
        let address = try LEAddress("01:23:45:67:89:AB", type: "random")
        var socketAddress = L2CAPSocket.address(address, psm: 0x0081)
        #expect(MemoryLayout.size(ofValue: socketAddress) == 14)
        let bytes = withUnsafeBytes(of: &socketAddress) { Array($0) }
        // family (2, host order), PSM (2, little-endian), address (6, reversed), CID 0 (2), type (1), padding.
        #expect(bytes[0..<2] == [UInt8(AF_BLUETOOTH), 0])
        #expect(bytes[2..<4] == [0x81, 0x00])
        #expect(bytes[4..<10] == [0xAB, 0x89, 0x67, 0x45, 0x23, 0x01])
        #expect(bytes[10..<12] == [0, 0])
        #expect(bytes[12] == 2)  // BDADDR_LE_RANDOM
        #expect(L2CAPSocket.psm(of: socketAddress) == 0x0081)
        #expect(L2CAPSocket.leAddress(socketAddress) == address)
        let publicAddress = L2CAPSocket.address(try LEAddress("01:23:45:67:89:AB", type: "public"), psm: 0x1234)
        #expect(publicAddress.l2_bdaddr_type == 1)  // BDADDR_LE_PUBLIC
        #expect(L2CAPSocket.psm(of: publicAddress) == 0x1234)
        var bredr = socketAddress
        bredr.l2_bdaddr_type = 0
        #expect(L2CAPSocket.leAddress(bredr) == nil)
    }

    @Test func errorsNameTheCallAndTheErrno() {
        #expect(
            L2CAPError.connectFailed(peer: "4A:0B:CC:DD:EE:F1 (random)", psm: 0xF0, errno: ECONNREFUSED).description
                == "connecting to PSM 0x00f0 at 4A:0B:CC:DD:EE:F1 (random) was refused: nothing listens there"
                + " (Connection refused (ECONNREFUSED, errno 111))")
        #expect(
            L2CAPError.system(call: "bind(L2CAP, 00:11:22:33:44:55 (public))", errno: EADDRNOTAVAIL).description
                == "bind(L2CAP, 00:11:22:33:44:55 (public)) failed: Cannot assign requested address (EADDRNOTAVAIL, errno 99)")
        #expect(L2CAPError.psmOutOfRange(0x7F).description == "PSM 0x007f is outside the LE dynamic range 0x0080…0x00FF")
        #expect(
            L2CAPError.timedOut(peer: "p", psm: 0x80, seconds: 1.5).description
                == "connecting to PSM 0x0080 at p did not complete within 1.5 s")
        #expect(L2CAPError.explain(4095) == "Unknown error 4095 (errno 4095)")
    }

    /// The build hosts' kernels have no Bluetooth: a clear error, no crash. On a kernel with
    /// Bluetooth, binding to an address no controller has fails instead (EADDRNOTAVAIL).
    @Test func withoutBluetoothListeningAndConnectingSaySo() async throws {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_SEQPACKET.rawValue), 0)  // BTPROTO_L2CAP
        let hasBluetooth = probe >= 0
        if hasBluetooth { close(probe) }
        let nobody = try LEAddress("00:00:5E:00:53:01", type: "public")
        do {
            _ = try L2CAPListener.listen(on: nobody)
            Issue.record("listening succeeded")
        } catch {
            if hasBluetooth {
                #expect(error == .system(call: "bind(L2CAP, 00:00:5E:00:53:01 (public))", errno: EADDRNOTAVAIL))
            } else {
                #expect(error == .kernelHasNoBluetooth)
            }
        }
        do {
            _ = try await L2CAPConnector.connect(from: nobody, to: nobody, psm: 0x80, timeout: .seconds(1))
            Issue.record("connecting succeeded")
        } catch {
            if hasBluetooth {
                #expect(error == .system(call: "bind(L2CAP, 00:00:5E:00:53:01 (public))", errno: EADDRNOTAVAIL))
            } else {
                #expect(error == .kernelHasNoBluetooth)
            }
        }
    }

    @Test(arguments: [UInt16(0), 0x7F, 0x100, 0x1001])
    func connectRefusesPSMsOutsideTheDynamicRange(_ psm: UInt16) async throws {
        let nobody = try LEAddress("00:00:5E:00:53:01", type: "public")
        await #expect(throws: L2CAPError.psmOutOfRange(psm)) {
            _ = try await L2CAPConnector.connect(from: nobody, to: nobody, psm: psm, timeout: .seconds(1))
        }
    }

    @Test func receiveMTUsOutsideWhatLECoCAllowsAreRefusedBeforeAnySocket() {
        let nobody = try! LEAddress("00:00:5E:00:53:01", type: "public")
        #expect(throws: L2CAPError.system(call: "setsockopt(BT_RCVMTU 22): LE CoC MTUs are 23…65535", errno: EINVAL)) {
            _ = try L2CAPListener.listen(on: nobody, receiveMTU: 22)
        }
    }
}
