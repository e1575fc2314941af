#if canImport(Glibc)
import Glibc
#endif
import DBus

/// The Device1 objects of the tree as the advertisement path keeps them: typed,
/// by path. A record is newer than the tree's dictionary for RSSI and
/// ManufacturerData while `unsettled`.
///
/// A *compact* record is the whole of its device: the tree holds no dictionary
/// for it (`BlueZObjectManager`'s compact devices, BlueZObjectManager+Compact.swift),
/// and its Device1 properties are made from the record when read (`interfaces`).
///
/// Records are filed under a hash of their path's bytes (`key`), so that the
/// path of a signal is looked up as libdbus holds it: no `String` is made of it
/// and no `String` is hashed, per advertisement. Two paths with the same hash
/// (which FNV-1a over a few dozen bytes makes unlikely, not impossible) are both
/// kept: the second in `colliding`.
struct DeviceTable {
    struct Record {
        var advertisement: DeviceAdvertisement
        var unsettled = false
        /// Not in the tree's dictionaries: this record is all there is of the device.
        var compact = false
        /// `Connected` and `ServicesResolved`, kept for compact records only.
        var connected = false
        var servicesResolved = false

        /// The Device1 properties a compact record stands for.
        var properties: [String: DBusValue] {
            var properties: [String: DBusValue] = [
                "Address": .string(advertisement.address), "AddressType": .string(advertisement.addressType),
                "Adapter": .objectPath(advertisement.adapter), "Connected": .boolean(connected),
                "ServicesResolved": .boolean(servicesResolved),
            ]
            if let rssi = advertisement.rssi { properties["RSSI"] = .int16(rssi) }
            if !advertisement.manufacturerData.isEmpty { properties["ManufacturerData"] = advertisement.manufacturerData.value }
            return properties
        }
    }

    private var records: [UInt64: Record] = [:]
    private var colliding: [DBusObjectPath: Record] = [:]
    /// Some record is unsettled.
    private(set) var unsettled = false
    /// How many records are compact.
    private(set) var compactCount = 0
    /// The hash records are filed under (`fnv1a`; tests give one that collides).
    private let key: @Sendable (UnsafePointer<CChar>) -> UInt64

    init(key: @escaping @Sendable (UnsafePointer<CChar>) -> UInt64 = DeviceTable.fnv1a) {
        self.key = key
    }

    /// 64-bit FNV-1a of a NUL-terminated path.
    static func fnv1a(_ path: UnsafePointer<CChar>) -> UInt64 {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        var p = path
        while p.pointee != 0 {
            hash = (hash ^ UInt64(UInt8(bitPattern: p.pointee))) &* 0x0000_0100_0000_01b3
            p += 1
        }
        return hash
    }

    private func key(of path: DBusObjectPath) -> UInt64 { path.rawValue.withCString(key) }

    /// The record of `path`, if any.
    func record(of path: DBusObjectPath) -> Record? {
        if let record = records[key(of: path)], record.advertisement.device == path { return record }
        return colliding[path]
    }

    /// The advertisement of `path`'s record, if any.
    func advertisement(of path: DBusObjectPath) -> DeviceAdvertisement? { record(of: path)?.advertisement }

    /// The Device1 interface of `path` when its record is compact.
    func interfaces(of path: DBusObjectPath) -> BlueZObjectManager.Interfaces? {
        guard let record = record(of: path), record.compact else { return nil }
        return [Device1.interface: record.properties]
    }

    /// Every compact record's path and Device1 interface.
    var compactInterfaces: [(path: DBusObjectPath, interfaces: BlueZObjectManager.Interfaces)] {
        guard compactCount > 0 else { return [] }
        return (Array(records.values) + Array(colliding.values)).lazy.filter(\.compact).map {
            ($0.advertisement.device, [Device1.interface: $0.properties])
        }
    }

    private static func same(_ path: DBusObjectPath, _ other: UnsafePointer<CChar>) -> Bool {
        path.rawValue.withCString { strcmp($0, other) == 0 }
    }

    /// Applies an advertisement to a known device; nil for an unknown one.
    mutating func apply(_ change: AdvertisementChange, toPath path: UnsafePointer<CChar>) -> DeviceAdvertisement? {
        applyRecord(change, toPath: path)?.advertisement
    }

    /// Applies an advertisement to a known device: its record after the change; nil for an unknown one.
    mutating func applyRecord(_ change: AdvertisementChange, toPath path: UnsafePointer<CChar>) -> Record? {
        let record: Record
        if let index = records.index(forKey: key(path)), Self.same(records.values[index].advertisement.device, path) {
            record = Self.update(&records.values[index], with: change)
        } else if let index = colliding.firstIndex(where: { Self.same($0.key, path) }) {
            record = Self.update(&colliding.values[index], with: change)
        } else {
            return nil
        }
        if !record.compact { unsettled = true }
        return record
    }

    private static func update(_ record: inout Record, with change: AdvertisementChange) -> Record {
        if let rssi = change.rssi { record.advertisement.rssi = rssi }
        if let data = change.manufacturerData { record.advertisement.manufacturerData = data }
        if !record.compact { record.unsettled = true }
        return record
    }

    /// Writes unsettled records' RSSI and ManufacturerData into `objects`.
    mutating func settle(into objects: inout [DBusObjectPath: BlueZObjectManager.Interfaces]) {
        guard unsettled else { return }
        unsettled = false
        for index in records.indices where records.values[index].unsettled {
            records.values[index].unsettled = false
            let advertisement = records.values[index].advertisement
            Self.write(advertisement, into: &objects[advertisement.device])
        }
        for index in colliding.indices where colliding.values[index].unsettled {
            colliding.values[index].unsettled = false
            let advertisement = colliding.values[index].advertisement
            Self.write(advertisement, into: &objects[advertisement.device])
        }
    }

    private static func write(_ advertisement: DeviceAdvertisement, into interfaces: inout BlueZObjectManager.Interfaces?) {
        guard var properties = interfaces?[Device1.interface] else { return }
        properties["RSSI"] = advertisement.rssi.map(DBusValue.int16)
        // Left out when bluetoothd never sent any, as bluetoothd leaves it out.
        if !advertisement.manufacturerData.isEmpty || properties["ManufacturerData"] != nil {
            properties["ManufacturerData"] = advertisement.manufacturerData.value
        }
        interfaces?[Device1.interface] = properties
    }

    /// Rebuilds the record of `path` from the tree (settled: call `settle` first),
    /// returning it; nil (and no record) when the object has no Device1 with an Address.
    @discardableResult
    mutating func refresh(_ path: DBusObjectPath, from objects: [DBusObjectPath: BlueZObjectManager.Interfaces])
        -> DeviceAdvertisement?
    {
        remove(path)
        guard let properties = objects[path]?[Device1.interface],
            let advertisement = DeviceAdvertisement(device: path, properties: properties)
        else { return nil }
        file(Record(advertisement: advertisement), at: path)
        return advertisement
    }

    /// Files a compact record for `path` from its Device1 properties, replacing
    /// any record; nil (and no record) without an Address.
    @discardableResult
    mutating func setCompact(_ path: DBusObjectPath, properties: [String: DBusValue]) -> DeviceAdvertisement? {
        remove(path)
        guard let advertisement = DeviceAdvertisement(device: path, properties: properties) else { return nil }
        var record = Record(advertisement: advertisement, compact: true)
        record.connected = properties["Connected"] == .boolean(true)
        record.servicesResolved = properties["ServicesResolved"] == .boolean(true)
        file(record, at: path)
        return advertisement
    }

    private mutating func remove(_ path: DBusObjectPath) {
        let key = key(of: path)
        if let record = records[key], record.advertisement.device == path {
            if record.compact { compactCount -= 1 }
            records[key] = nil
        }
        if let record = colliding.removeValue(forKey: path), record.compact { compactCount -= 1 }
    }

    private mutating func file(_ record: Record, at path: DBusObjectPath) {
        let key = key(of: path)
        if record.compact { compactCount += 1 }
        if records[key] == nil { records[key] = record } else { colliding[path] = record }
    }

    mutating func removeAll() {
        records.removeAll()
        colliding.removeAll()
        unsettled = false
        compactCount = 0
    }
}
