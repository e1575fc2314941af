import DBus

/// `org.bluez.Adapter1`: a local Bluetooth controller, at `/org/bluez/hciN`.
///
/// A snapshot of the adapter's properties plus its methods. Discovery sessions
/// belong to the calling connection: bluetoothd keeps scanning while any
/// client holds one, and drops a client's session when it leaves the bus.
public struct Adapter1: Sendable {
    public static let interface = "org.bluez.Adapter1"

    /// The object path, for example `/org/bluez/hci0`.
    public let path: DBusObjectPath
    /// The Bluetooth device address.
    public var address: String
    /// "public" or "random": the type of the identity address.
    public var addressType: String
    /// The system name (pretty hostname).
    public var name: String
    /// The friendly name.
    public var alias: String
    /// Whether the adapter is switched on.
    public var powered: Bool
    /// Whether a discovery (scan) is running.
    public var discovering: Bool
    /// The roles the adapter supports ("central", "peripheral", …).
    public var roles: [String]

    /// The interface name of the adapter, such as `hci0`: the last path element.
    public var interfaceName: String { path.elements.last.map(String.init) ?? path.rawValue }

    /// Reads the adapter from its `org.bluez.Adapter1` properties.
    /// - Throws: `DBusDecodingError` when a required property is missing or mistyped.
    public init(path: DBusObjectPath, properties: [String: DBusValue]) throws(DBusDecodingError) {
        self.path = path
        address = try properties.require("Address")
        addressType = try properties.optional("AddressType") ?? "public"
        name = try properties.optional("Name") ?? ""
        alias = try properties.optional("Alias") ?? name
        powered = try properties.optional("Powered") ?? false
        discovering = try properties.optional("Discovering") ?? false
        roles = try properties.optional("Roles") ?? []
    }

    // MARK: Methods

    /// `SetDiscoveryFilter(dict filter)`: sets this client's discovery filter.
    public static func setDiscoveryFilter(
        _ filter: DiscoveryFilter, adapter: DBusObjectPath, on connection: DBusConnection
    ) async throws {
        try await call(connection, adapter, "SetDiscoveryFilter", [filter.dbusValue])
    }

    /// `StartDiscovery()`: acquires this client's discovery session.
    public static func startDiscovery(adapter: DBusObjectPath, on connection: DBusConnection) async throws {
        try await call(connection, adapter, "StartDiscovery")
    }

    /// `StopDiscovery()`: releases this client's discovery session.
    public static func stopDiscovery(adapter: DBusObjectPath, on connection: DBusConnection) async throws {
        try await call(connection, adapter, "StopDiscovery")
    }

    /// `RemoveDevice(object device)`: forgets a remote device.
    public static func removeDevice(
        _ device: DBusObjectPath, adapter: DBusObjectPath, on connection: DBusConnection
    ) async throws {
        try await call(connection, adapter, "RemoveDevice", [.objectPath(device)])
    }

    /// Sets the `Powered` property.
    public static func setPowered(_ on: Bool, adapter: DBusObjectPath, on connection: DBusConnection) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: adapter, interface: "org.freedesktop.DBus.Properties", member: "Set",
            [.string(interface), .string("Powered"), .variant(.boolean(on))])
    }

    private static func call(
        _ connection: DBusConnection, _ path: DBusObjectPath, _ member: String, _ body: [DBusValue] = []
    ) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: path, interface: interface, member: member, body)
    }
}
