import DBus

/// The options bluetoothd passes to a local characteristic's `ReadValue` and
/// `WriteValue` (the `dict options` argument in BlueZ's
/// org.bluez.GattCharacteristic documentation, server side).
///
/// bluetoothd 5.66 sends `device`, `link` and `mtu` every time, `offset` only
/// when it is not zero, and `prepare-authorize` only for prepared writes to a
/// characteristic with the "authorize" flag. The documented `type` is listed
/// for completeness: bluetoothd (up to at least 5.79) does not send it to
/// applications.
public struct GattRequestOptions: Sendable, Equatable {
    /// The remote device, as an `org.bluez.Device1` path on the local adapter.
    public var device: DBusObjectPath?
    /// The ATT MTU of the link. A notification carries at most `mtu - 3` bytes.
    public var mtu: UInt16?
    /// The offset into the value, in bytes (long reads and writes).
    public var offset: UInt16
    /// "LE" or "BR/EDR".
    public var link: String?
    /// The write procedure, when the sender says.
    public var type: GattCharacteristic1.WriteType?
    /// A prepared write that asks for authorization first.
    public var prepareAuthorize: Bool

    public init(
        device: DBusObjectPath? = nil, mtu: UInt16? = nil, offset: UInt16 = 0, link: String? = nil,
        type: GattCharacteristic1.WriteType? = nil, prepareAuthorize: Bool = false
    ) {
        self.device = device
        self.mtu = mtu
        self.offset = offset
        self.link = link
        self.type = type
        self.prepareAuthorize = prepareAuthorize
    }

    /// Reads the options dictionary. Unknown keys are ignored, as bluetoothd may add some.
    /// - Throws: `DBusDecodingError` when a known key has the wrong type.
    public init(_ options: [String: DBusValue]) throws(DBusDecodingError) {
        device = try options.optional("device")
        mtu = try options.optional("mtu")
        offset = try options.optional("offset") ?? 0
        link = try options.optional("link")
        if let text: String = try options.optional("type") {
            guard let type = GattCharacteristic1.WriteType(rawValue: text) else {
                throw .invalidValue("unknown write type '\(text)'")
            }
            self.type = type
        } else {
            type = nil
        }
        prepareAuthorize = try options.optional("prepare-authorize") ?? false
    }

    /// The most bytes one notification can carry on this link: `mtu - 3`, and
    /// never more than an attribute value's 512. Nil when the MTU is unknown.
    public var maximumNotificationLength: Int? {
        mtu.map { min(GattCharacteristic1.maximumValueLength, max(0, Int($0) - 3)) }
    }
}
