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

    /// Calls `observer` whenever a Device1 advertisement (a `PropertiesChanged`
    /// of nothing but RSSI and ManufacturerData) names an object the tree does not
    /// hold: bluetoothd has not announced it, or it did so while `GetManagedObjects`
    /// was on its way and the snapshot has not been merged yet. Such a change
    /// cannot become a `DeviceAdvertisement` (no address, no adapter), so it goes
    /// nowhere else; the observer learns the object's path and the data, to count
    /// what it lost. Runs on the connection's thread, until the token is cancelled.
    public func observeUnannouncedAdvertisements(
        _ observer: @escaping @Sendable (DBusObjectPath, ManufacturerData?) -> Void
    ) -> ObserverToken {
        let id = state.withLock { state in
            state.nextObserver += 1
            state.unannouncedObservers[state.nextObserver] = observer
            return state.nextObserver
        }
        return ObserverToken { [weak self] in
            _ = self?.state.withLock { $0.unannouncedObservers.removeValue(forKey: id) }
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
    func applyAdvertisement(_ reader: DBusMessageReader) -> Bool {
        guard let change = AdvertisementChange(reading: reader) else {
            reader.rewind()
            reader.next()
            return false
        }
        /// What became of the change, decided under the lock.
        enum Delivery {
            case known(DeviceAdvertisement, [@Sendable (DeviceAdvertisement) -> Void])
            /// The tree has no Device1 at the path.
            case unannounced([@Sendable (DBusObjectPath, ManufacturerData?) -> Void])
            /// The tree has the Device1 but the table no record (no Address yet).
            case general
        }
        let delivery = reader.withPath { path in
            state.withLock { state -> Delivery in
                if let record = state.devices.applyRecord(change, toPath: path) {
                    let advertisement = record.advertisement
                    if state.journal != nil { state.journal?.set(advertisement.device, Device1.interface, change.names) }
                    if record.compact, change.manufacturerData != nil { state.keepIfWanted(record) }
                    return .known(advertisement, state.advertisementObserverList)
                }
                // Rare (a device not announced yet): a String of the path is affordable here.
                guard let object = try? DBusObjectPath(String(cString: path)),
                    state.objects[object]?[Device1.interface] == nil
                else { return .general }
                return .unannounced(state.unannouncedObserverList)
            }
        }
        switch delivery {
        case .known(let advertisement, let observers)?:
            for observer in observers { observer(advertisement) }
            return true
        case .unannounced(let observers)?:
            // The general path would find no object and do nothing either.
            if !observers.isEmpty, let path = reader.path {
                for observer in observers { observer(path, change.manufacturerData) }
            }
            return true
        case .general?, nil:
            reader.rewind()
            reader.next()
            return false
        }
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

    init(rssi: Int16? = nil, manufacturerData: ManufacturerData? = nil) {
        self.rssi = rssi
        self.manufacturerData = manufacturerData
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
