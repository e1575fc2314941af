import DBus

/// `org.bluez.LEAdvertisingManager1`: registers advertisements on an adapter
/// (same path as the adapter).
///
/// `RegisterAdvertisement` makes bluetoothd call back into the registering
/// connection (`GetAll` on the advertisement object) before it replies; our
/// D-Bus layer keeps serving while the call is pending, so that cannot deadlock.
public struct LEAdvertisingManager1: Sendable {
    public static let interface = "org.bluez.LEAdvertisingManager1"

    public let path: DBusObjectPath
    /// Number of active advertising instances.
    public var activeInstances: UInt8
    /// Number of instances the controller supports (5 on btvirt).
    public var supportedInstances: UInt8
    /// Maximum advertising data length (31 on legacy controllers), when reported.
    public var maxAdvertisingLength: UInt8?
    /// The secondary channels (`1M`, `2M`, `Coded`) extended advertisements may
    /// use. bluetoothd offers the property only when the kernel reports a
    /// secondary PHY, which it does only for controllers with LE extended
    /// advertising; nil means a controller with legacy advertising only.
    public var supportedSecondaryChannels: [String]?

    /// True when the controller has LE extended advertising. Then every
    /// advertising instance has its own random address, and one registered
    /// afresh gets a new one; a legacy controller shares one address among all
    /// instances and its scans (docs/privacy.md).
    public var hasExtendedAdvertising: Bool { supportedSecondaryChannels != nil }

    public init(path: DBusObjectPath, properties: [String: DBusValue]) throws(DBusDecodingError) {
        self.path = path
        activeInstances = try properties.optional("ActiveInstances") ?? 0
        supportedInstances = try properties.optional("SupportedInstances") ?? 0
        let capabilities: [String: DBusValue] = try properties.optional("SupportedCapabilities") ?? [:]
        maxAdvertisingLength = try capabilities.optional("MaxAdvLen")
        supportedSecondaryChannels = try properties.optional("SupportedSecondaryChannels")
    }

    /// `RegisterAdvertisement(object advertisement, dict options)`.
    /// - Throws: `DBusError` such as `org.bluez.Error.NotPermitted` (no free instance),
    ///   `InvalidLength` (data too long) or `AlreadyExists`.
    public static func registerAdvertisement(
        _ advertisement: DBusObjectPath, adapter: DBusObjectPath, on connection: DBusConnection,
        options: [String: DBusValue] = [:]
    ) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: adapter, interface: interface, member: "RegisterAdvertisement",
            [.objectPath(advertisement), .vardict(options)])
    }

    /// `UnregisterAdvertisement(object advertisement)`. bluetoothd does not call
    /// `Release` for it.
    public static func unregisterAdvertisement(
        _ advertisement: DBusObjectPath, adapter: DBusObjectPath, on connection: DBusConnection
    ) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: adapter, interface: interface, member: "UnregisterAdvertisement",
            [.objectPath(advertisement)])
    }
}
