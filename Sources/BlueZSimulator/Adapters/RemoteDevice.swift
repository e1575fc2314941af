import DBus

/// A remote device a scanning adapter has heard: bluetoothd's temporary
/// `org.bluez.Device1` object under the adapter's path.
///
/// Confined to its `BluetoothDaemon`. The D-Bus object is exported and changed
/// through the daemon's `BusWriter`; this class keeps the values bluetoothd
/// would compare new reports against.
final class RemoteDevice {
    static let interface = "org.bluez.Device1"

    let address: DeviceAddress
    let path: DBusObjectPath
    let adapterPath: DBusObjectPath
    let box = ExportedObjectBox()
    /// Properties the exported object declares. The DBus module cannot add a
    /// property to an exported interface, so those that exist only once known
    /// (Name, Appearance, ManufacturerData, …) are declared when first seen.
    private(set) var declared: Set<String> = []

    var name: String?
    var rssi: Int16?
    var txPower: Int16?
    var appearance: UInt16?
    var uuids: [String] = []
    var manufacturerData: [AdvertisementContent.ManufacturerEntry] = []
    var serviceData: [AdvertisementContent.ServiceDataEntry] = []
    var flags: UInt8?
    /// Whether the last report was connectable: StopDiscovery keeps such devices.
    var connectable = false
    /// Made by `StartFlood` rather than heard on the air.
    var isFlood = false
    /// "random" for advertisers heard on the air; "public" for a central that connected in.
    var addressType = "random"
    /// Temporary devices expire after `TemporaryTimeout`; Connect makes a device permanent.
    var temporary = true
    /// Fires `TemporaryTimeout` after the last report.
    var temporaryTimer: Task<Void, Never>?
    var temporaryGeneration: UInt64 = 0

    init(address: DeviceAddress, adapterPath: DBusObjectPath) {
        self.address = address
        self.adapterPath = adapterPath
        // The element is always valid: "dev_" and hex digits.
        path = (try? adapterPath.appending(address.pathElement)) ?? adapterPath
    }

    /// Takes the first report's values, as bluetoothd's InterfacesAdded carries them.
    func absorbFirst(_ report: AirReport) {
        name = report.name
        rssi = report.rssi == 0 ? nil : report.rssi
        txPower = report.txPower
        appearance = report.appearance
        uuids = report.uuids
        manufacturerData = report.manufacturerData
        serviceData = report.serviceData
        flags = report.flags
        connectable = report.connectable
    }

    // MARK: Property values

    var alias: String { name ?? address.dashed }

    var manufacturerDataValue: DBusValue {
        .dictionary(
            key: .uint16, value: .variant,
            manufacturerData.map { (.uint16($0.company), .variant(.bytes($0.bytes))) })
    }

    var serviceDataValue: DBusValue {
        .dictionary(
            key: .string, value: .variant, serviceData.map { (.string($0.uuid.canonical), .variant(.bytes($0.bytes))) })
    }

    /// The value of a report-driven property, by name.
    func value(of property: String) -> DBusValue? {
        switch property {
        case "Name": name.map(DBusValue.string)
        case "RSSI": rssi.map(DBusValue.int16)
        case "TxPower": txPower.map(DBusValue.int16)
        case "Appearance": appearance.map(DBusValue.uint16)
        case "UUIDs": .strings(uuids)
        case "ManufacturerData": manufacturerData.isEmpty ? nil : manufacturerDataValue
        case "ServiceData": serviceData.isEmpty ? nil : serviceDataValue
        case "AdvertisingFlags": flags.map { .bytes([$0]) }
        case "Alias": .string(alias)
        default: nil
        }
    }

    /// The Device1 interface as it stands, for export.
    func makeInterface(methods: [DBusMethod]) -> DBusInterface {
        var properties: [DBusProperty] = [
            DBusProperty("Address", address.description, changeSignal: .const),
            DBusProperty("AddressType", addressType, changeSignal: .const),
        ]
        /// Report-driven properties: the daemon emits their PropertiesChanged
        /// itself, because bluetoothd re-sends unchanged ManufacturerData under DuplicateData.
        func reported(_ name: String, _ type: DBusType) {
            guard let value = value(of: name) else { return }
            properties.append(DBusProperty(name, type: type, value: value, changeSignal: .false))
        }
        reported("Name", .string)
        properties.append(DBusProperty("Alias", type: .string, value: .string(alias), access: .readwrite))
        reported("Appearance", .uint16)
        properties += [
            DBusProperty("Paired", type: .boolean, value: .boolean(false)),
            DBusProperty("Bonded", type: .boolean, value: .boolean(false)),
            DBusProperty("Trusted", type: .boolean, value: false, access: .readwrite),
            DBusProperty("Blocked", type: .boolean, value: false, access: .readwrite),
            DBusProperty("LegacyPairing", type: .boolean, value: .boolean(false)),
        ]
        reported("RSSI", .int16)
        properties.append(DBusProperty("Connected", type: .boolean, value: .boolean(false)))
        reported("UUIDs", .array(.string))
        properties.append(DBusProperty("Adapter", adapterPath, changeSignal: .const))
        reported("ManufacturerData", .array(.dictEntry(key: .uint16, value: .variant)))
        reported("ServiceData", .array(.dictEntry(key: .string, value: .variant)))
        reported("TxPower", .int16)
        properties.append(DBusProperty("ServicesResolved", type: .boolean, value: .boolean(false)))
        reported("AdvertisingFlags", .array(.byte))
        declared = Set(properties.map(\.name))
        return DBusInterface(Self.interface, methods: methods, properties: properties)
    }

    /// The stored values for `changed` properties this object declares.
    func storable(_ changed: [String: DBusValue]) -> [String: DBusValue] {
        changed.filter { declared.contains($0.key) }
    }
}
