import DBus

/// One advertisement heard by the local adapter, carrying our company ID.
public struct AdvertisementReport: Sendable, Equatable {
    /// The adapter that heard it, such as `/org/bluez/hci1`.
    public var adapter: DBusObjectPath
    /// The Device1 object bluetoothd made for the sender (one per sender address).
    public var device: DBusObjectPath
    /// The sender's address as seen on the air.
    public var address: String
    /// "public" or "random".
    public var addressType: String
    /// Signal strength in dBm, when known (btvirt reports 127, "not available").
    public var rssi: Int16?
    /// The company ID the data was filed under.
    public var companyID: UInt16
    /// The Manufacturer Specific Data after the company ID.
    public var data: [UInt8]
    /// When the report was received, on the monotonic clock.
    public var receivedAt: ContinuousClock.Instant
}

/// What the scanner reports.
public enum ScanEvent: Sendable, Equatable {
    /// An advertisement with our company ID was heard (again, or with new data or RSSI).
    case report(AdvertisementReport)
    /// bluetoothd forgot a device we had reported (its temporary timeout ran out,
    /// discovery stopped, or bluetoothd went away).
    case lost(device: DBusObjectPath, address: String)
}
