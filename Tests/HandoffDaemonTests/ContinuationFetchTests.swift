import DBus
import HandoffCore
import Testing

@testable import HandoffDaemon

/// How the continuing side reads a refusal out of the write's error
/// (docs/continuation.md, section 5): bluetoothd's text for an application error.
@Suite struct ContinuationFetchTests {
    @Test(arguments: ExchangeStatus.allCases.filter { $0 != .ok })
    func everyRefusalIsReadBack(status: ExchangeStatus) {
        // What the origin throws, as bluetoothd on the continuing side reports it.
        let code = String(GattContinuationLink.refusal(status).message.dropFirst(2))
        let error = DBusError(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x\(code)")
        #expect(ContinuationFetch.refusal(in: error) == status)
    }

    @Test(arguments: [
        "Operation failed with ATT error: 0x80", "Operation failed with ATT error: 0x0e",
        "Operation failed with ATT error: 0x8f", "Not connected", "Operation failed with ATT error: 0x",
    ])
    func otherErrorsAreNoRefusal(message: String) {
        #expect(ContinuationFetch.refusal(in: DBusError(name: "org.bluez.Error.Failed", message: message)) == nil)
    }

    @Test func linkLossIsRecognised() {
        #expect(ContinuationFetch.isNotConnected(DBusError(name: "org.bluez.Error.Failed", message: "Not connected")))
        #expect(ContinuationFetch.isNotConnected(DBusError(.bluezNotConnected, "Not Connected")))
        #expect(!ContinuationFetch.isNotConnected(DBusError(name: "org.bluez.Error.Failed", message: "Failed")))
    }
}
