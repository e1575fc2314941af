import BlueZ
import HandoffCore
import Testing

@testable import HandoffDaemon

/// `Advertiser`'s decisions, without a radio: renewal within an epoch and rotation at its end.
@Suite struct AdvertiserTests {
    static let account = try! AccountKey(name: "held", secret: Array(0..<32))
    static let reading = try! ActivityType("org.example.reading")
    static let start = ContinuousClock.now

    static func advertiser() -> Advertiser {
        var advertiser = Advertiser(configuration: BeaconConfiguration(epochLength: 60), expiry: .seconds(45))
        _ = advertiser.apply(AdvertisingPolicy(advertise: true, type: .broadcast, availability: nil))
        return advertiser
    }

    static func wanted() -> [WantedBeacon] {
        [WantedBeacon(account: account, activity: "a1", type: reading, flags: [])]
    }

    /// The payload on the air after deciding `seconds` after the start.
    static func onAir(_ advertiser: inout Advertiser, at seconds: Int) -> [UInt8]? {
        let decision = advertiser.decide(
            wanted(), now: 1_800_000_000 + Double(seconds), instant: start + .seconds(seconds))
        return decision.onAir.first?.payload
    }

    @Test func theBeaconIsRenewedWithinTheEpochAndRotatedAtItsEnd() throws {
        var advertiser = Self.advertiser()
        let first = try #require(Self.onAir(&advertiser, at: 0))
        #expect(Self.onAir(&advertiser, at: 5) == first)
        let renewed = Self.onAir(&advertiser, at: 16)
        #expect(renewed != nil && renewed != first)
        let rotated = Self.onAir(&advertiser, at: 130)
        #expect(rotated != nil && rotated != renewed)
    }
}
