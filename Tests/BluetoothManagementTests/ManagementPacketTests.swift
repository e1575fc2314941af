import Testing

@testable import BluetoothManagement

@Suite struct ManagementPacketTests {
    @Test func commandCompleteCarriesOpcodeStatusAndReturnParameters() throws {
        let bytes = ManagementVectors.commandComplete(
            opcode: 0x0004, index: 0, parameters: ManagementVectors.controllerInformation())
        #expect(bytes.prefix(9) == [0x01, 0x00, 0x00, 0x00, 0x1B, 0x01, 0x04, 0x00, 0x00])  // 283 = 0x011B
        let packet = try ManagementPacket(bytes: bytes)
        #expect(packet.code == 0x0001 && packet.index == 0 && packet.parameters.count == 283)
        guard case .commandComplete(0x0004, .success, let parameters) = try ManagementEvent(packet) else {
            Issue.record("not a Command Complete for 0x0004")
            return
        }
        #expect(parameters == ManagementVectors.controllerInformation())
    }

    @Test func commandStatusCarriesTheFailure() throws {
        let packet = try ManagementPacket(bytes: ManagementVectors.commandStatus(opcode: 0x0004, index: 7, status: 0x11))
        #expect(try ManagementEvent(packet) == .commandStatus(opcode: 0x0004, status: .invalidIndex))
        #expect(ManagementStatus.invalidIndex.description == "Invalid Index (0x11)")
        #expect(ManagementStatus(rawValue: 0x42).description == "status 0x42")
    }

    @Test func otherEventsAreNamedByCode() throws {
        let packet = try ManagementPacket(bytes: ManagementVectors.newSettings(index: 0, settings: 1))
        #expect(try ManagementEvent(packet) == .other(code: 0x0006))
    }

    @Test func lengthsMustAgree() {
        #expect(throws: ManagementError.self) { try ManagementPacket(bytes: [0x01, 0x00, 0x00]) }
        #expect(throws: ManagementError.self) {
            try ManagementPacket(bytes: [0x01, 0x00, 0x00, 0x00, 0x05, 0x00, 0x04, 0x00])
        }
        // A command event too short to hold opcode and status.
        #expect(throws: ManagementError.self) {
            try ManagementEvent(ManagementPacket(bytes: [0x01, 0x00, 0x00, 0x00, 0x02, 0x00, 0x04, 0x00]))
        }
    }

    @Test func roundTrips() throws {
        let packet = ManagementPacket(code: 0x1234, index: 0xABCD, parameters: [1, 2, 3])
        #expect(packet.bytes == [0x34, 0x12, 0xCD, 0xAB, 0x03, 0x00, 1, 2, 3])
        #expect(try ManagementPacket(bytes: packet.bytes) == packet)
    }
}
