import DBus

/// What bluetoothd knows of a device's advertisements, after a change: the
/// device's identity and its current `RSSI` and `ManufacturerData`.
///
/// `BlueZObjectManager.observeAdvertisements` delivers one whenever a Device1
/// appears or its RSSI or ManufacturerData change. While discovering with
/// `DuplicateData` on, bluetoothd sends such a change for every advertisement
/// it receives, so this is the scanner's per-advertisement input: typed, read
/// straight from the signal, with no property dictionary built.
public struct DeviceAdvertisement: Sendable, Equatable {
    /// The device, its adapter and its address, shared with its reports.
    var identity: DeviceIdentity

    /// The Device1 object, such as `/org/bluez/hci0/dev_C0_FF_EE_00_00_01`.
    public var device: DBusObjectPath {
        get { identity.device }
        set { identity = identity.with(device: newValue) }
    }
    /// `Adapter`: the adapter that heard the device (the object's parent when
    /// bluetoothd does not say).
    public var adapter: DBusObjectPath {
        get { identity.adapter }
        set { identity = identity.with(adapter: newValue) }
    }
    /// `Address`.
    public var address: String {
        get { identity.address }
        set { identity = identity.with(address: newValue) }
    }
    /// `AddressType`: "public" or "random".
    public var addressType: String {
        get { identity.addressType }
        set { identity = identity.with(addressType: newValue) }
    }
    /// `RSSI` of the last advertisement in dBm; nil when unknown.
    public var rssi: Int16?
    /// `ManufacturerData`.
    public var manufacturerData: ManufacturerData

    public init(
        device: DBusObjectPath, adapter: DBusObjectPath, address: String, addressType: String, rssi: Int16?,
        manufacturerData: ManufacturerData
    ) {
        identity = DeviceIdentity(device: device, adapter: adapter, address: address, addressType: addressType)
        self.rssi = rssi
        self.manufacturerData = manufacturerData
    }

    /// Reads a Device1's properties; nil without an `Address`.
    init?(device: DBusObjectPath, properties: [String: DBusValue]) {
        guard case .string(let address)? = properties["Address"] else { return nil }
        let addressType = if case .string(let type)? = properties["AddressType"] { type } else { "public" }
        let adapter = if case .objectPath(let path)? = properties["Adapter"] { path } else { device.parent }
        identity = DeviceIdentity(device: device, adapter: adapter, address: address, addressType: addressType)
        rssi = if case .int16(let value)? = properties["RSSI"] { value } else { nil }
        manufacturerData = properties["ManufacturerData"].flatMap(ManufacturerData.init) ?? ManufacturerData()
    }
}
