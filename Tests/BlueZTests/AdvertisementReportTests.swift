import BlueZ
import DBus
import Testing

/// Reports and advertisements share one identity object per device behind
/// their public properties: they must still behave as plain values.
@Suite struct AdvertisementReportTests {
    static let now = ContinuousClock.now

    static func report(address: String = "C0:FF:EE:00:00:01") -> AdvertisementReport {
        AdvertisementReport(
            adapter: "/org/bluez/hci0", device: "/org/bluez/hci0/dev_C0_FF_EE_00_00_01", address: address,
            addressType: "random", rssi: -50, companyID: 0xFFFF, data: [1, 2], receivedAt: now)
    }

    @Test func aChangedCopyLeavesTheOriginalAlone() {
        let original = Self.report()
        var copy = original
        #expect(copy == original)
        copy.address = "C0:FF:EE:00:00:02"
        copy.addressType = "public"
        copy.adapter = "/org/bluez/hci1"
        copy.device = "/org/bluez/hci1/dev_C0_FF_EE_00_00_02"
        #expect(original.address == "C0:FF:EE:00:00:01" && original.addressType == "random")
        #expect(original.adapter == "/org/bluez/hci0" && original.device == "/org/bluez/hci0/dev_C0_FF_EE_00_00_01")
        #expect(copy.address == "C0:FF:EE:00:00:02" && copy.addressType == "public")
        #expect(copy.adapter == "/org/bluez/hci1" && copy.device == "/org/bluez/hci1/dev_C0_FF_EE_00_00_02")
        #expect(copy != original)
        // Equal values are equal, whichever objects hold them.
        #expect(Self.report() == Self.report())
        #expect(Self.report(address: "x") != Self.report())
    }

    @Test func advertisementsToo() {
        let original = DeviceAdvertisement(
            device: "/org/bluez/hci0/dev_1", adapter: "/org/bluez/hci0", address: "a", addressType: "random", rssi: nil,
            manufacturerData: ManufacturerData())
        var copy = original
        copy.address = "b"
        #expect(original.address == "a" && copy.address == "b" && copy != original)
        copy.address = "a"
        #expect(copy == original)
    }
}
