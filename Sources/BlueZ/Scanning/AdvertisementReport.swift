import DBus

/// One advertisement heard by the local adapter, carrying our company ID.
public struct AdvertisementReport: Sendable, Equatable {
    /// The adapter, device and address, shared with the device's other reports.
    var identity: DeviceIdentity

    /// The adapter that heard it, such as `/org/bluez/hci1`.
    public var adapter: DBusObjectPath {
        get { identity.adapter }
        set { identity = identity.with(adapter: newValue) }
    }
    /// The Device1 object bluetoothd made for the sender (one per sender address).
    public var device: DBusObjectPath {
        get { identity.device }
        set { identity = identity.with(device: newValue) }
    }
    /// The sender's address as seen on the air.
    public var address: String {
        get { identity.address }
        set { identity = identity.with(address: newValue) }
    }
    /// "public" or "random".
    public var addressType: String {
        get { identity.addressType }
        set { identity = identity.with(addressType: newValue) }
    }
    /// Signal strength in dBm, when known (btvirt reports 127, "not available").
    public var rssi: Int16?
    /// The company ID the data was filed under.
    public var companyID: UInt16
    /// The Manufacturer Specific Data after the company ID.
    public var data: [UInt8]
    /// When the report was received, on the monotonic clock.
    public var receivedAt: ContinuousClock.Instant

    public init(
        adapter: DBusObjectPath, device: DBusObjectPath, address: String, addressType: String, rssi: Int16?,
        companyID: UInt16, data: [UInt8], receivedAt: ContinuousClock.Instant
    ) {
        self.init(
            identity: DeviceIdentity(device: device, adapter: adapter, address: address, addressType: addressType),
            rssi: rssi, companyID: companyID, data: data, receivedAt: receivedAt)
    }

    init(
        identity: DeviceIdentity, rssi: Int16?, companyID: UInt16, data: [UInt8], receivedAt: ContinuousClock.Instant
    ) {
        self.identity = identity
        self.rssi = rssi
        self.companyID = companyID
        self.data = data
        self.receivedAt = receivedAt
    }
}

/// What the scanner reports.
public enum ScanEvent: Sendable, Equatable {
    /// An advertisement with our company ID was heard (again, or with new data or RSSI).
    case report(AdvertisementReport)
}
