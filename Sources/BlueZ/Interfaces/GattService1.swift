import DBus

/// `org.bluez.GattService1`: a GATT service of a remote device, at
/// `/org/bluez/hciN/dev_XX_XX_XX_XX_XX_XX/serviceXXXX` (client side), or one
/// exported by an application (server side, see `LocalGattService`).
///
/// bluetoothd exports a remote device's services once it has connected and
/// discovered them, and sets `Device1.ServicesResolved` when all are there. They
/// go away when the device disconnects.
public struct GattService1: Sendable, Equatable {
    public static let interface = "org.bluez.GattService1"

    public let path: DBusObjectPath
    /// The service UUID, 128-bit lowercase as bluetoothd shows it.
    public var uuid: String
    /// A primary (not secondary) service.
    public var primary: Bool
    /// The device it belongs to (remote services only).
    public var device: DBusObjectPath?
    /// The attribute handle (client side).
    public var handle: UInt16?

    /// Reads the service from its properties.
    /// - Throws: `DBusDecodingError` when a required property is missing or mistyped.
    public init(path: DBusObjectPath, properties: [String: DBusValue]) throws(DBusDecodingError) {
        self.path = path
        uuid = try properties.require("UUID", as: String.self).lowercased()
        primary = try properties.optional("Primary") ?? true
        device = try properties.optional("Device")
        handle = try properties.optional("Handle")
    }
}
