import DBus

/// `org.bluez.GattManager1`: registers local GATT applications on an adapter
/// (same path as the adapter).
///
/// An application is an object tree under one root that implements
/// `org.freedesktop.DBus.ObjectManager`; bluetoothd reads it with
/// `GetManagedObjects` before `RegisterApplication` replies.
public enum GattManager1 {
    public static let interface = "org.bluez.GattManager1"

    /// `RegisterApplication(object application, dict options)`.
    public static func registerApplication(
        _ application: DBusObjectPath, adapter: DBusObjectPath, on connection: DBusConnection,
        options: [String: DBusValue] = [:]
    ) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: adapter, interface: interface, member: "RegisterApplication",
            [.objectPath(application), .vardict(options)])
    }

    /// `UnregisterApplication(object application)`.
    public static func unregisterApplication(
        _ application: DBusObjectPath, adapter: DBusObjectPath, on connection: DBusConnection
    ) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: adapter, interface: interface, member: "UnregisterApplication",
            [.objectPath(application)])
    }
}
