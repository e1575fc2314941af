import BlueZ
import DBusTestSupport
import HandoffCore
import Testing

@testable import HandoffDaemon

/// `scanReportsHeard` counts every report the daemon took, whatever became of
/// it (docs/protocol.md, `status`): a stranger's advertisement, a pairing
/// advertisement (which goes to pairing, not to the nearby registry) alike.
@Suite(.timeLimit(.minutes(1))) struct HeardReportsTests {
    @Test func everyReportTakenIsCountedHeardPairingAdvertisementsToo() async throws {
        let rig = try await DaemonRig("heard")
        let client = try await rig.client()
        #expect(try await client.call("status")["scanReportsHeard"] as? Int == 0)
        var generator = SystemRandomNumberGenerator()
        let offer = PairingAdvertisement(using: &generator)
        rig.radio.hear(offer.payload, from: "/org/bluez/hci0/dev_offer")
        rig.radio.hear(Array(repeating: 0xAB, count: 24), from: "/org/bluez/hci0/dev_stranger")
        rig.radio.hear(offer.payload, from: "/org/bluez/hci0/dev_offer")
        try await eventually { try await client.call("status")["beaconsRejected"] as? Int == 1 }
        // The stranger came after the first offer, the second offer after it: all three taken.
        try await eventually { try await client.call("status")["scanReportsHeard"] as? Int == 3 }
        await rig.stop()
    }
}
