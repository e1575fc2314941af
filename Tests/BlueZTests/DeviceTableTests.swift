@testable import BlueZ
import DBus
import Testing

/// The advertisement path's device records, filed under a hash of the path:
/// paths whose hashes collide must still be kept apart.
@Suite struct DeviceTableTests {
    static let first: DBusObjectPath = "/org/bluez/hci0/dev_00_AA_01_00_00_01"
    static let second: DBusObjectPath = "/org/bluez/hci0/dev_00_AA_01_00_00_02"

    static func tree(_ paths: [DBusObjectPath]) -> [DBusObjectPath: BlueZObjectManager.Interfaces] {
        Dictionary(
            uniqueKeysWithValues: paths.map { path in
                (path, [Device1.interface: ["Address": .string(String(path.rawValue.suffix(17).map { $0 == "_" ? ":" : $0 }))]])
            })
    }

    static func apply(_ rssi: Int16, to path: DBusObjectPath, in table: inout DeviceTable) -> DeviceAdvertisement? {
        path.rawValue.withCString { table.apply(AdvertisementChange(rssi: rssi), toPath: $0) }
    }

    @Test(arguments: [false, true]) func keepsDevicesApart(collide: Bool) throws {
        var table = collide ? DeviceTable(key: { _ in 7 }) : DeviceTable()
        var objects = Self.tree([Self.first, Self.second])
        #expect(table.refresh(Self.first, from: objects)?.address == "00:AA:01:00:00:01")
        #expect(table.refresh(Self.second, from: objects)?.address == "00:AA:01:00:00:02")

        #expect(Self.apply(-40, to: Self.first, in: &table)?.device == Self.first)
        #expect(Self.apply(-50, to: Self.second, in: &table)?.device == Self.second)
        #expect(Self.apply(-60, to: "/org/bluez/hci0/dev_00_AA_01_00_00_03", in: &table) == nil)
        #expect(table.advertisement(of: Self.first)?.rssi == -40)
        #expect(table.advertisement(of: Self.second)?.rssi == -50)
        #expect(table.unsettled)

        table.settle(into: &objects)
        #expect(!table.unsettled)
        #expect(objects[Self.first]?[Device1.interface]?["RSSI"] == .int16(-40))
        #expect(objects[Self.second]?[Device1.interface]?["RSSI"] == .int16(-50))

        // The first goes; the second stays reachable, and the first can come back.
        objects[Self.first] = nil
        #expect(table.refresh(Self.first, from: objects) == nil)
        #expect(table.advertisement(of: Self.first) == nil)
        #expect(Self.apply(-41, to: Self.first, in: &table) == nil)
        #expect(Self.apply(-51, to: Self.second, in: &table)?.rssi == -51)
        objects[Self.first] = Self.tree([Self.first])[Self.first]
        #expect(table.refresh(Self.first, from: objects)?.rssi == nil)
        #expect(Self.apply(-42, to: Self.first, in: &table)?.rssi == -42)
        #expect(table.advertisement(of: Self.second)?.rssi == -51)

        table.removeAll()
        #expect(table.advertisement(of: Self.first) == nil && table.advertisement(of: Self.second) == nil)
    }

    @Test func theHashIsFNV1a() {
        // The published 64-bit FNV-1a test vectors.
        #expect("".withCString(DeviceTable.fnv1a) == 0xcbf2_9ce4_8422_2325)
        #expect("a".withCString(DeviceTable.fnv1a) == 0xaf63_dc4c_8601_ec8c)
        #expect("foobar".withCString(DeviceTable.fnv1a) == 0x8594_4171_f739_67e8)
    }
}
