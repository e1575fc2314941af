import DBus

/// `org.bluez.Device1`: a remote device bluetoothd has heard, at
/// `/org/bluez/hciN/dev_XX_XX_XX_XX_XX_XX`.
///
/// During discovery every advertiser gets one; a new address (an address
/// rotation) makes a new object. Temporary devices disappear
/// `TemporaryTimeout` seconds (30 by default) after they were last seen.
public struct Device1: Sendable, Equatable {
    public static let interface = "org.bluez.Device1"

    public let path: DBusObjectPath
    /// The remote address.
    public var address: String
    /// "public" or "random".
    public var addressType: String
    /// The adapter that heard it.
    public var adapter: DBusObjectPath?
    /// Signal strength of the last advertisement, in dBm; absent when unknown.
    public var rssi: Int16?
    /// Manufacturer-specific data by company ID, from the advertisements.
    public var manufacturerData: [UInt16: [UInt8]]
    /// Whether an LE connection is up.
    public var connected: Bool
    /// Whether GATT services have been discovered.
    public var servicesResolved: Bool

    /// Reads the device from its `org.bluez.Device1` properties.
    /// - Throws: `DBusDecodingError` when a property is missing or mistyped.
    public init(path: DBusObjectPath, properties: [String: DBusValue]) throws(DBusDecodingError) {
        self.path = path
        address = try properties.require("Address")
        addressType = try properties.optional("AddressType") ?? "public"
        adapter = try properties.optional("Adapter")
        rssi = try properties.optional("RSSI")
        manufacturerData = try properties["ManufacturerData"].map(Self.manufacturerData(from:)) ?? [:]
        connected = try properties.optional("Connected") ?? false
        servicesResolved = try properties.optional("ServicesResolved") ?? false
    }

    /// Decodes a `ManufacturerData` value: `a{qv}` whose variants hold `ay`.
    /// - Throws: `DBusDecodingError` on any other shape.
    public static func manufacturerData(from value: DBusValue) throws(DBusDecodingError) -> [UInt16: [UInt8]] {
        try ManufacturerData(decoding: value).dictionary
    }

    // MARK: Methods

    /// `Connect()`: connects to the device (an LE connection for LE-only devices).
    ///
    /// bluetoothd replies once the link is up; its GATT objects come later, so
    /// wait for `ServicesResolved` (`BlueZObjectManager.waitForServicesResolved`).
    /// Seen with 5.66 on the VM rig: Connect on a connected device succeeds at
    /// once; a second Connect while one is pending fails with
    /// `org.bluez.Error.Failed` "Operation already in progress"; a device that
    /// advertises only non-connectably (Type "broadcast") never answers, so the
    /// call ends with `org.freedesktop.DBus.Error.NoReply` after `timeout`, and
    /// `Disconnect` cancels the attempt (Connect then fails with `Failed`
    /// "br-connection-canceled").
    public static func connect(_ device: DBusObjectPath, on connection: DBusConnection, timeout: Duration = .seconds(25))
        async throws
    {
        try await connection.call(
            destination: BlueZ.serviceName, path: device, interface: interface, member: "Connect", timeout: timeout)
    }

    /// `Disconnect()`: closes every connection to the device.
    ///
    /// bluetoothd 5.66 drops the link about 2 s after the request (its
    /// DISCONNECT_TIMER) and replies then; it succeeds at once when not
    /// connected. The device's GATT objects stay (calls on them fail with
    /// `Failed` "Not connected") until the device object goes: an unpaired device
    /// is temporary again and expires `TemporaryTimeout` after the disconnect,
    /// or at once with `Adapter1.removeDevice`.
    public static func disconnect(_ device: DBusObjectPath, on connection: DBusConnection) async throws {
        try await connection.call(destination: BlueZ.serviceName, path: device, interface: interface, member: "Disconnect")
    }
}
