import BlueZ
import DBus
import Testing

@Suite struct ManufacturerDataTests {
    static let twoCompanies = DBusValue.dictionary(
        key: .uint16, value: .variant,
        [
            (.uint16(0x004C), .variant(.bytes([9, 9]))),
            (.uint16(0xFFFF), .variant(.bytes([1, 2, 3]))),
        ])

    @Test func readsEachCompanysBytes() throws {
        let data = try #require(ManufacturerData(Self.twoCompanies))
        #expect(data[0xFFFF] == [1, 2, 3])
        #expect(data[0x004C] == [9, 9])
        #expect(data[0x0006] == nil)
        #expect(data.dictionary == [0x004C: [9, 9], 0xFFFF: [1, 2, 3]])
        // The same reading as Device1's.
        #expect(try Device1.manufacturerData(from: Self.twoCompanies) == data.dictionary)
    }

    @Test func encodesWhatItDecodes() throws {
        #expect(ManufacturerData(Self.twoCompanies)?.value == Self.twoCompanies)
        let empty = DBusValue.dictionary(key: .uint16, value: .variant, [])
        #expect(ManufacturerData(empty) == ManufacturerData())
        #expect(ManufacturerData().value == empty)
    }

    @Test func aRepeatedCompanyKeepsItsLastEntry() {
        let data = ManufacturerData([.init(company: 1, bytes: [1]), .init(company: 1, bytes: [2])])
        #expect(data[1] == [2])
        #expect(data.dictionary == [1: [2]])
    }

    @Test func refusesOtherShapes() {
        let notBytes = DBusValue.dictionary(key: .uint16, value: .variant, [(.uint16(0xFFFF), .variant(.string("x")))])
        #expect(ManufacturerData(notBytes) == nil)
        #expect(ManufacturerData(.bytes([1, 2])) == nil)
        #expect(ManufacturerData(.dictionary(key: .string, value: .variant, [])) == nil)
    }
}
