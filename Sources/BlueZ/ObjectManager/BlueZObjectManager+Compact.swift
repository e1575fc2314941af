import DBus

// Compact devices. In a crowded room bluetoothd announces a Device1 for every
// advertiser it hears, each with a dozen properties; the tree's dictionaries
// cost about 3 KiB a device. With `keepingInFull` (`start`), a device whose
// ManufacturerData the predicate does not want is held *compact*: only its
// `DeviceTable` record (identity, RSSI, ManufacturerData, Connected,
// ServicesResolved), and its Device1 properties are made from the record when
// the tree is read. Everything else it carried (Name, Alias, UUIDs, Paired, …,
// and its Properties and Introspectable interfaces) is not kept. It is held in
// full from the change on that makes its ManufacturerData wanted, or that adds
// another interface to it; what was dropped before is not fetched again.

extension BlueZObjectManager {
    /// How many devices are held compact.
    public var compactDeviceCount: Int { state.withLock { $0.devices.compactCount } }
}

extension BlueZObjectManager.State {
    /// Interfaces every object has, which a compact device drops.
    static let standardInterfaces: Set<String> = [
        "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Introspectable",
    ]

    /// The interfaces of `path`: the tree's, or a compact device's Device1.
    func interfaces(of path: DBusObjectPath) -> BlueZObjectManager.Interfaces? {
        objects[path] ?? devices.interfaces(of: path)
    }

    /// Whether an object with `interfaces` (not in the tree) is held compact: a
    /// Device1 and nothing else but the standard interfaces, whose
    /// ManufacturerData `keepsInFull` does not want.
    func isCompact(_ interfaces: BlueZObjectManager.Interfaces) -> Bool {
        guard let keepsInFull, let device = interfaces[Device1.interface] else { return false }
        for name in interfaces.keys where name != Device1.interface && !Self.standardInterfaces.contains(name) {
            return false
        }
        return !keepsInFull(device["ManufacturerData"].flatMap(ManufacturerData.init) ?? ManufacturerData())
    }

    /// Adds `interfaces` to `path` (an `InterfacesAdded`, or a snapshot's entry,
    /// which `replacing` whole interfaces rather than merging their properties),
    /// filing the object compact or in the tree. Returns the object's interfaces
    /// after the change, and its advertisement when a Device1 was among `interfaces`.
    mutating func add(_ path: DBusObjectPath, _ interfaces: BlueZObjectManager.Interfaces, replacing: Bool)
        -> (interfaces: BlueZObjectManager.Interfaces, advertisement: DeviceAdvertisement?)
    {
        let inTree = objects[path] != nil
        var merged = objects[path] ?? devices.interfaces(of: path) ?? [:]
        if replacing {
            merged.merge(interfaces) { _, new in new }
        } else {
            merged.merge(interfaces) { old, new in old.merging(new) { _, new in new } }
        }
        let addsDevice = interfaces[Device1.interface] != nil
        if !inTree, isCompact(merged), let device = merged[Device1.interface],
            let advertisement = devices.setCompact(path, properties: device)
        {
            return (merged, addsDevice ? advertisement : nil)
        }
        let wasCompact = !inTree && devices.interfaces(of: path) != nil
        objects[path] = merged
        guard addsDevice || wasCompact else { return (merged, nil) }
        let advertisement = devices.refresh(path, from: objects)
        return (merged, addsDevice ? advertisement : nil)
    }

    /// Applies a Device1 `PropertiesChanged` to a compact device, which stays
    /// compact or goes into the tree (see `isCompact`). Nil when `path` is not a
    /// compact device. `current` is its Device1 properties after the change.
    mutating func changeCompact(_ path: DBusObjectPath, changed: [String: DBusValue], invalidated: [String])
        -> (current: [String: DBusValue], advertisement: DeviceAdvertisement?)?
    {
        guard var interfaces = devices.interfaces(of: path), var device = interfaces[Device1.interface] else {
            return nil
        }
        _ = device.apply(changed: changed, invalidated: invalidated)
        interfaces[Device1.interface] = device
        if isCompact(interfaces), let advertisement = devices.setCompact(path, properties: device) {
            return (devices.interfaces(of: path)?[Device1.interface] ?? device, advertisement)
        }
        objects[path] = interfaces
        return (device, devices.refresh(path, from: objects))
    }

    /// After an advertisement changed `record`: a compact device whose
    /// ManufacturerData `keepsInFull` now wants goes into the tree.
    mutating func keepIfWanted(_ record: DeviceTable.Record) {
        guard record.compact, let keepsInFull, keepsInFull(record.advertisement.manufacturerData) else { return }
        let path = record.advertisement.device
        objects[path] = [Device1.interface: record.properties]
        devices.refresh(path, from: objects)
    }

    /// Every object: the tree's and the compact devices.
    var allObjects: [DBusObjectPath: BlueZObjectManager.Interfaces] {
        var all = objects
        for (path, interfaces) in devices.compactInterfaces { all[path] = interfaces }
        return all
    }
}
