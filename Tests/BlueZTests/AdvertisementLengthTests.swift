import BlueZ
import DBus
import DBusTestSupport
import Testing

/// Advertising data that does not fit: bluetoothd 5.66 answers
/// `org.bluez.Error.Failed` where the API documents `InvalidLength`, and the
/// radio must read both as "too long", say so, and not send the same data again.
@Suite(.serialized, .timeLimit(.minutes(1))) struct AdvertisementLengthTests {
    static let fits: [UInt8] = Array(repeating: 0x11, count: 24)  // 4 + 24 = 28 bytes
    static let largest: [UInt8] = Array(repeating: 0x22, count: 27)  // 31 bytes
    static let tooLong: [UInt8] = Array(repeating: 0x33, count: 28)  // 32 bytes

    @Test func countsTheDataAsBluetoothdDoes() {
        #expect(LEAdvertisementData(manufacturerData: [0xFFFF: Self.fits]).advertisingDataLength == 28)
        #expect(
            LEAdvertisementData(manufacturerData: [0xFFFF: [1], 0x004C: [2, 3]]).advertisingDataLength == 5 + 6)
        #expect(
            LEAdvertisementData(type: .peripheral, manufacturerData: [0xFFFF: Self.fits], discoverable: true)
                .advertisingDataLength == 31)
        #expect(LEAdvertisementData(type: .peripheral, discoverable: false).advertisingDataLength == 0)
        // Service UUIDs: one list per size; 128-bit UUIDs on the base UUID count as 16-bit.
        #expect(LEAdvertisementData(serviceUUIDs: ["180d"]).advertisingDataLength == 4)
        #expect(LEAdvertisementData(serviceUUIDs: ["0000180D-0000-1000-8000-00805F9B34FB"]).advertisingDataLength == 4)
        #expect(LEAdvertisementData(serviceUUIDs: ["12345678-0000-1000-8000-00805f9b34fb"]).advertisingDataLength == 6)
        #expect(
            LEAdvertisementData(serviceUUIDs: [
                "6e400001-b5a3-f393-e0a9-e50e24dcca9e", "6e400002-b5a3-f393-e0a9-e50e24dcca9e", "180f",
            ]).advertisingDataLength == (2 + 32) + (2 + 2))
        // Includes: appearance takes 4 bytes, tx-power 3 of the budget, the local name none.
        let includes = LEAdvertisementData(includes: ["appearance", "tx-power", "local-name"])
        #expect(includes.advertisingDataLength == 4)
        #expect(includes.advertisingDataBudget(maxAdvertisingLength: 31) == 28)
        #expect(LEAdvertisementData(localName: "a long local name").advertisingDataLength == 0)
    }

    @Test func failedCountsAsTooLongOnlyWhenTheDataIsOverTheBudget() {
        let failed = DBusError(name: "org.bluez.Error.Failed", message: "Failed to register advertisement")
        let long = LEAdvertisementData(manufacturerData: [0xFFFF: Self.tooLong])
        let refusal = AdvertisementTooLong(failed, data: long, maxAdvertisingLength: 31)
        #expect(refusal == AdvertisementTooLong(length: 32, budget: 31, reply: failed))
        #expect(refusal?.description.contains("too long (32 bytes, at most 31)") == true)
        // Not about the length: the same reply for data that fits is something else.
        #expect(AdvertisementTooLong(failed, data: .init(manufacturerData: [0xFFFF: Self.largest]), maxAdvertisingLength: 31) == nil)
        // An adapter that reports no MaxAdvLen is taken as legacy (31).
        #expect(AdvertisementTooLong(failed, data: long, maxAdvertisingLength: nil)?.budget == 31)
        // An extended-advertising controller with room for it.
        #expect(AdvertisementTooLong(failed, data: long, maxAdvertisingLength: 251) == nil)
        // InvalidLength says so itself.
        let invalidLength = DBusError(name: "org.bluez.Error.InvalidLength", message: "Invalid Length")
        #expect(
            AdvertisementTooLong(invalidLength, data: .init(manufacturerData: [0xFFFF: Self.fits]), maxAdvertisingLength: 31)
                != nil)
        // Other refusals are not about the length.
        let notPermitted = DBusError(name: "org.bluez.Error.NotPermitted", message: "Maximum advertisements reached")
        #expect(AdvertisementTooLong(notPermitted, data: long, maxAdvertisingLength: 31) == nil)
    }

    /// bluetoothd 5.66's answer (`--length-error org.bluez.Error.Failed`) and the documented one.
    @Test(arguments: ["org.bluez.Error.Failed", "org.bluez.Error.InvalidLength"])
    func theRadioReportsTooLongDataOnceAndRecoversWithDataThatFits(lengthError: String) async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--length-error", lengthError, "--quiet"])
        let a = try await Laptop(bus: bus, adapter: "hci0")
        try await a.waitUntilReady()
        let radio = a.radio
        await radio.advertise(.broadcast(Self.tooLong))
        try await eventually { await radio.status.lastError?.contains("too long (32 bytes, at most 31)") == true }
        let status = await radio.status
        #expect(status.lastError?.contains(lengthError) == true)
        #expect(status.advertising == false)
        // Scanning goes on, and the refusal is final: a radio that retried would be
        // "failing" between its attempts. Watch it for a while (the first retry
        // would come after 250 ms, the next after 500 ms).
        for _ in 0..<15 {
            let now = await radio.status
            #expect(now.phase == .ready("hci0"))
            #expect(now.scanning && !now.advertising)
            #expect(now.lastError?.contains("too long") == true)
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(try await sim.activeInstances("hci0") == 0)
        // Data that fits goes on the air, and the error is gone.
        await radio.advertise(.broadcast(Self.largest))
        try await eventually { await radio.status.advertising }
        #expect(await radio.status.lastError == nil)
        #expect(try await sim.activeInstances("hci0") == 1)
        await a.stop()
        await sim.stop()
    }
}
