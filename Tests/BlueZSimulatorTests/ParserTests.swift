@testable import BlueZSimulator
import DBus
import Testing

/// The pure parts: UUIDs, advertisement parsing and length, discovery filters.
@Suite struct ParserTests {
    @Test func uuidsParseLikeBluetoothd() throws {
        #expect(BluetoothUUID("180d")?.width == .bits16)
        #expect(BluetoothUUID("0x180D")?.canonical == "0000180d-0000-1000-8000-00805f9b34fb")
        #expect(BluetoothUUID("0000180D-0000-1000-8000-00805F9B34FB")?.width == .bits16)
        #expect(BluetoothUUID("12345678")?.width == .bits32)
        #expect(BluetoothUUID("6e400001-b5a3-f393-e0a9-e50e24dcca9e")?.width == .bits128)
        #expect(BluetoothUUID("hello") == nil)
        #expect(BluetoothUUID("180g") == nil)
    }

    @Test func lengthCountsEveryStructureLikeBtAdGenerate() throws {
        let properties: [String: DBusValue] = [
            "Type": "peripheral",
            "ServiceUUIDs": .strings(["180d", "180f", "6e400001-b5a3-f393-e0a9-e50e24dcca9e"]),
            "ManufacturerData": .dictionary(key: .uint16, value: .variant, [(.uint16(0xFFFF), .variant(.bytes([1, 2])))]),
            "Appearance": .uint16(0x0340),
        ]
        let content = try AdvertisementParser.parse(properties, maxLength: 31)
        // 16-bit list 2+4, 128-bit list 2+16, manufacturer 4+2, appearance 4.
        #expect(content.advertisingDataLength(discoverableTimedOut: false) == 6 + 18 + 6 + 4)
        #expect(throws: AdvertisementProblem.tooLong(length: 34, budget: 31)) {
            try content.checkLength(maxLength: 31, adapterDiscoverable: false)
        }
    }

    @Test func theKernelsFlagsAndIncludesReduceTheBudget() throws {
        let peripheral = try AdvertisementParser.parse(
            ["Type": "peripheral", "Includes": .strings(["tx-power", "appearance"])], maxLength: 31)
        #expect(peripheral.advertisingBudget(maxLength: 31, adapterDiscoverable: false, discoverableTimedOut: false) == 24)
        #expect(peripheral.advertisingBudget(maxLength: 31, adapterDiscoverable: true, discoverableTimedOut: false) == 21)
        #expect(peripheral.flagsOnAir(adapterDiscoverable: true, discoverableTimedOut: false) == 0x06)
        let broadcast = try AdvertisementParser.parse(["Type": "broadcast"], maxLength: 31)
        #expect(broadcast.advertisingBudget(maxLength: 31, adapterDiscoverable: true, discoverableTimedOut: false) == 31)
        #expect(broadcast.flagsOnAir(adapterDiscoverable: true, discoverableTimedOut: false) == 0x04)
        let limited = try AdvertisementParser.parse(
            ["Type": "peripheral", "Discoverable": true, "DiscoverableTimeout": .uint16(5)], maxLength: 31)
        #expect(limited.flagsOnAir(adapterDiscoverable: false, discoverableTimedOut: false) == 0x05)
        #expect(limited.flagsOnAir(adapterDiscoverable: false, discoverableTimedOut: true) == 0x04)
        // 5.66 adds no Flags field for Discoverable false.
        let notDiscoverable = try AdvertisementParser.parse(["Type": "peripheral", "Discoverable": false], maxLength: 31)
        #expect(notDiscoverable.advertisingDataLength(discoverableTimedOut: false) == 0)
    }

    @Test func intervalsAreCheckedInControllerUnits() throws {
        #expect(throws: AdvertisementProblem.self) {
            try AdvertisementParser.parse(["Type": "peripheral", "MinInterval": .uint32(100)], maxLength: 31)
        }
        let content = try AdvertisementParser.parse(
            ["Type": "peripheral", "MinInterval": .uint32(100), "MaxInterval": .uint32(150)], maxLength: 31)
        #expect(content.minInterval == 160)
        #expect(content.maxInterval == 240)
    }

    @Test func filtersMergeLikeBluetoothd() throws {
        let filtered = try #require(
            try DiscoveryFilter.parse([
                (.string("RSSI"), .variant(.int16(-60))), (.string("UUIDs"), .variant(.strings(["180d"]))),
            ]))
        let other = try #require(try DiscoveryFilter.parse([(.string("RSSI"), .variant(.int16(-80)))]))
        let merged = MergedDiscoveryFilter([filtered, other])
        #expect(merged.filtered)
        #expect(merged.rssi == -80)
        #expect(merged.uuids.isEmpty)  // one client wants every UUID
        let withRegular = MergedDiscoveryFilter([filtered, nil])
        #expect(withRegular.filtered)
        #expect(withRegular.rssi == nil)
        #expect(!MergedDiscoveryFilter([nil]).filtered)
        #expect(try DiscoveryFilter.parse([]) == nil)
    }
}
