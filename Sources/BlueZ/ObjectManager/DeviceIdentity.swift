import DBus

/// Who a device is, as its reports carry it: the Device1 object, the adapter
/// that heard it, and its address. Immutable and shared, so that copying a
/// report or an advertisement, which happens a few times per advertisement
/// between the D-Bus thread and the consumer, costs one reference rather than
/// four strings.
final class DeviceIdentity: Sendable, Equatable {
    let device: DBusObjectPath
    let adapter: DBusObjectPath
    let address: String
    let addressType: String

    init(device: DBusObjectPath, adapter: DBusObjectPath, address: String, addressType: String) {
        self.device = device
        self.adapter = adapter
        self.address = address
        self.addressType = addressType
    }

    static func == (lhs: DeviceIdentity, rhs: DeviceIdentity) -> Bool {
        lhs === rhs
            || (lhs.device == rhs.device && lhs.adapter == rhs.adapter && lhs.address == rhs.address
                && lhs.addressType == rhs.addressType)
    }

    /// A copy with one field changed, for the public setters.
    func with(
        device: DBusObjectPath? = nil, adapter: DBusObjectPath? = nil, address: String? = nil,
        addressType: String? = nil
    ) -> DeviceIdentity {
        DeviceIdentity(
            device: device ?? self.device, adapter: adapter ?? self.adapter, address: address ?? self.address,
            addressType: addressType ?? self.addressType)
    }
}
