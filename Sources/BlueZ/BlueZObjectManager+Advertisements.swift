import DBus

// The advertisement path: while discovering with DuplicateData, bluetoothd sends
// a Device1 PropertiesChanged carrying ManufacturerData and RSSI for every
// advertisement it receives, thousands a second in a busy room. Those signals
// are read straight into a typed record per device (`DeviceTable`) and handed
// to advertisement observers as a `DeviceAdvertisement`; they build no property
// dictionary and no `Event`. The tree's dictionaries catch up (`settle`) only
// when somebody reads the tree or another change touches it.

extension BlueZObjectManager {
    /// Calls `observer` whenever a Device1 appears or its RSSI or
    /// ManufacturerData change, with what is known of the device after the
    /// change, until the returned token is cancelled. Runs on the connection's
    /// thread, like `observe`.
    ///
    /// A `PropertiesChanged` that carries nothing but a Device1's RSSI and
    /// ManufacturerData (an advertisement heard) goes only to these observers,
    /// not to `observe`'s: nothing else needs it at that rate. The tree
    /// (`properties(of:interface:)`) still shows the change.
    public func observeAdvertisements(_ observer: @escaping @Sendable (DeviceAdvertisement) -> Void)
        -> ObserverToken
    {
        let id = state.withLock { state in
            state.nextObserver += 1
            state.advertisementObservers[state.nextObserver] = observer
            return state.nextObserver
        }
        return ObserverToken { [weak self] in
            _ = self?.state.withLock { $0.advertisementObservers.removeValue(forKey: id) }
        }
    }

    func notify(_ advertisements: [DeviceAdvertisement]) {
        guard !advertisements.isEmpty else { return }
        let observers = state.withLock { $0.advertisementObserverList }
        for advertisement in advertisements {
            for observer in observers { observer(advertisement) }
        }
    }

    /// Applies the Device1 `PropertiesChanged` at `reader` (positioned on its
    /// changed properties) when it is an advertisement: nothing but RSSI and
    /// ManufacturerData changed, nothing invalidated, and the device is known.
    /// False otherwise, with the reader back on the changed properties.
    func applyAdvertisement(_ path: DBusObjectPath, _ reader: DBusMessageReader) -> Bool {
        guard let change = AdvertisementChange(reading: reader) else {
            reader.rewind()
            reader.next()
            return false
        }
        let delivery = state.withLock { state -> (DeviceAdvertisement, [@Sendable (DeviceAdvertisement) -> Void])? in
            guard let advertisement = state.devices.apply(change, to: path) else { return nil }
            if state.journal != nil { state.journal?.set(path, Device1.interface, change.names) }
            return (advertisement, state.advertisementObserverList)
        }
        guard let (advertisement, observers) = delivery else {
            reader.rewind()
            reader.next()
            return false
        }
        for observer in observers { observer(advertisement) }
        return true
    }
}

/// An advertisement's `PropertiesChanged` on a Device1, read in place.
struct AdvertisementChange {
    /// `RSSI`, when the signal carried it.
    var rssi: Int16?
    /// `ManufacturerData`, when the signal carried it.
    var manufacturerData: ManufacturerData?

    /// The properties the change sets.
    var names: [String] {
        (rssi == nil ? [] : ["RSSI"]) + (manufacturerData == nil ? [] : ["ManufacturerData"])
    }

    /// Reads the signal's changed properties (`a{sv}`, at the reader's
    /// position) and its invalidated ones (`as`, next). Nil when anything but
    /// RSSI and ManufacturerData of the usual types changed, or anything was
    /// invalidated: such a signal takes the general path.
    init?(reading reader: DBusMessageReader) {
        guard reader.enter() else { return nil }
        while reader.typeCode == UInt8(ascii: "e") {
            reader.enter()
            guard let name = reader.readString(preferring: "ManufacturerData"), reader.next() else { return nil }
            switch name {
            case "ManufacturerData":
                guard let data = ManufacturerData(reading: reader) else { return nil }
                manufacturerData = data
            case "RSSI":
                guard reader.enter(), let value = reader.readInt16() else { return nil }
                reader.leave()
                rssi = value
            default:
                return nil
            }
            reader.leave()
            reader.next()
        }
        reader.leave()
        guard rssi != nil || manufacturerData != nil, reader.next(), reader.enter() else { return nil }
        // Nothing invalidated.
        guard reader.typeCode == nil else { return nil }
        reader.leave()
    }
}

/// The Device1 objects of the tree as the advertisement path keeps them: typed,
/// by path. A record is newer than the tree's dictionary for RSSI and
/// ManufacturerData while `unsettled`.
struct DeviceTable {
    struct Record {
        var advertisement: DeviceAdvertisement
        var unsettled = false
    }

    private(set) var records: [DBusObjectPath: Record] = [:]
    /// Some record is unsettled.
    private(set) var unsettled = false

    /// Applies an advertisement to a known device; nil for an unknown one.
    mutating func apply(_ change: AdvertisementChange, to path: DBusObjectPath) -> DeviceAdvertisement? {
        guard let index = records.index(forKey: path) else { return nil }
        if let rssi = change.rssi { records.values[index].advertisement.rssi = rssi }
        if let data = change.manufacturerData { records.values[index].advertisement.manufacturerData = data }
        records.values[index].unsettled = true
        unsettled = true
        return records.values[index].advertisement
    }

    /// Writes unsettled records' RSSI and ManufacturerData into `objects`.
    mutating func settle(into objects: inout [DBusObjectPath: BlueZObjectManager.Interfaces]) {
        guard unsettled else { return }
        unsettled = false
        for index in records.indices where records.values[index].unsettled {
            records.values[index].unsettled = false
            let advertisement = records.values[index].advertisement
            Self.write(advertisement, into: &objects[records.keys[index]])
        }
    }

    private static func write(_ advertisement: DeviceAdvertisement, into interfaces: inout BlueZObjectManager.Interfaces?) {
        guard var properties = interfaces?[Device1.interface] else { return }
        properties["RSSI"] = advertisement.rssi.map(DBusValue.int16)
        // Left out when bluetoothd never sent any, as bluetoothd leaves it out.
        if !advertisement.manufacturerData.entries.isEmpty || properties["ManufacturerData"] != nil {
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
        guard let properties = objects[path]?[Device1.interface],
            let advertisement = DeviceAdvertisement(device: path, properties: properties)
        else {
            records[path] = nil
            return nil
        }
        records[path] = Record(advertisement: advertisement)
        return advertisement
    }

    mutating func removeAll() {
        records.removeAll()
        unsettled = false
    }
}
