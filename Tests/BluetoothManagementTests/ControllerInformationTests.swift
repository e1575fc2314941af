import Testing

@testable import BluetoothManagement

@Suite struct ControllerInformationTests {
    @Test func requestIsTheSixByteHeaderWithNoParameters() {
        #expect(ControllerInformation.request(index: 0).bytes == [0x04, 0x00, 0x00, 0x00, 0x00, 0x00])
        #expect(ControllerInformation.request(index: 0x0103).bytes == [0x04, 0x00, 0x03, 0x01, 0x00, 0x00])
    }

    @Test func parsesEveryField() throws {
        let info = try ControllerInformation(returnParameters: ManagementVectors.controllerInformation())
        #expect(info.address == "00:1A:7D:DA:71:13")
        #expect(info.version == 9)
        #expect(info.manufacturer == 2)
        #expect(info.supportedSettings.rawValue == 0x0001_FEFF)
        #expect(info.currentSettings == [.powered, .bondable, .lowEnergy, .privacy])
        #expect(info.classOfDevice == 0x0C010C)
        #expect(info.name == "alice-laptop")
        #expect(info.shortName == "alice")
        #expect(info.privacy == .on)
        #expect(info.currentSettings.description == "powered bondable le privacy")
    }

    @Test func privacyFollowsBit13OfCurrentAndSupportedSettings() throws {
        // powered, LE, advertising; privacy supported but off.
        let off = try ControllerInformation(
            returnParameters: ManagementVectors.controllerInformation(current: 0x0000_0601))
        #expect(off.privacy == .off)
        #expect(off.currentSettings.contains(.powered) && off.currentSettings.contains(.advertising))
        // Bit 13 not even supported (a BR/EDR-only controller).
        let unsupported = try ControllerInformation(
            returnParameters: ManagementVectors.controllerInformation(current: 0x0000_0081, supported: 0x0000_00FF))
        #expect(unsupported.privacy == .unsupported)
        #expect(!unsupported.currentSettings.contains(.lowEnergy))
    }

    @Test func aShortReplyIsMalformed() {
        let bytes = Array(ManagementVectors.controllerInformation().prefix(279))
        #expect(throws: ManagementError.malformed("Read Controller Information returned 279 bytes, 280 expected")) {
            try ControllerInformation(returnParameters: bytes)
        }
    }

    @Test func aNameWithoutTerminatorOrWithBadUTF8StillReads() throws {
        var bytes = ManagementVectors.controllerInformation()
        for offset in 20..<269 { bytes[offset] = 0x41 }  // 249 × "A", no NUL
        bytes[20] = 0xFF
        let info = try ControllerInformation(returnParameters: bytes)
        #expect(info.name.hasPrefix("\u{FFFD}AAA"))
        #expect(info.name.unicodeScalars.count == 249)
        #expect(info.shortName == "alice")
    }

    @Test func indexComesFromTheInterfaceName() {
        #expect(ControllerIndex.of(interfaceName: "hci0") == 0)
        #expect(ControllerIndex.of(interfaceName: "hci12") == 12)
        for bad in ["hci", "eth0", "hci-1", "hci0x", "hci65535", "hci99999", "hci١"] {
            #expect(ControllerIndex.of(interfaceName: bad) == nil, "\(bad)")
        }
    }
}
