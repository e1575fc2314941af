import Testing

@testable import BluetoothManagement

@Suite struct LEAddressTests {
    @Test func parsesBothCasesAndTypes() throws {
        let address = try LEAddress("4a:0B:cc:dd:EE:f1", type: "random")
        #expect(address.bytes == [0x4A, 0x0B, 0xCC, 0xDD, 0xEE, 0xF1])
        #expect(address.kind == .random)
        #expect(address.text == "4A:0B:CC:DD:EE:F1")
        #expect(address.description == "4A:0B:CC:DD:EE:F1 (random)")
        #expect(try LEAddress("00:00:00:00:00:01", type: "public").kind == .public)
    }

    @Test(arguments: ["", "00:11:22:33:44", "00:11:22:33:44:55:66", "0:11:22:33:44:55", "00:11:22:33:44:5G",
        "00-11-22-33-44-55", "00:11:22:33:44:55:", "+0:11:22:33:44:55"])
    func refusesMalformedAddresses(_ text: String) {
        #expect(throws: L2CAPError.invalidAddress("'\(text)' is not an address of the form AA:BB:CC:DD:EE:FF")) {
            try LEAddress(text, type: "public")
        }
    }

    @Test func refusesUnknownTypes() {
        #expect(throws: L2CAPError.invalidAddress("address type 'bredr' is neither public nor random")) {
            try LEAddress("00:11:22:33:44:55", type: "bredr")
        }
    }
}
