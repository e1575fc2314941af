import DBus

/// `org.bluez.GattManager1`: registers local GATT applications on an adapter
/// (same path as the adapter).
///
/// An application is an object tree under one root that implements
/// `org.freedesktop.DBus.ObjectManager`; bluetoothd reads it with
/// `GetManagedObjects` before `RegisterApplication` replies, so the caller's
/// connection must keep serving calls while it waits (ours does). See
/// `GattApplication` for exporting such a tree.
///
/// bluetoothd drops the application when its connection leaves the bus, and
/// drops a service at once when the application's object manager announces
/// its removal (InterfacesRemoved); objects added later are ignored.
public enum GattManager1 {
    public static let interface = "org.bluez.GattManager1"

    /// `RegisterApplication(object application, dict options)`.
    /// - Throws: `DBusError`, with what bluetoothd 5.66 answers (seen on the VM rig):
    ///   `org.bluez.Error.AlreadyExists` "Already Exists" (same connection and path);
    ///   `Failed` "No object received" (no object manager there, or no objects);
    ///   `Failed` "No valid service object found" (no service, a characteristic
    ///   naming no service of the application, missing or unknown Flags);
    ///   `Failed` "Failed to create entry in database" (a missing or invalid UUID,
    ///   no boolean Primary, the GAP/GATT service UUIDs, no room for the handles);
    ///   `InvalidArguments` for a malformed call.
    public static func registerApplication(
        _ application: DBusObjectPath, adapter: DBusObjectPath, on connection: DBusConnection,
        options: [String: DBusValue] = [:], timeout: Duration = DBusConnection.defaultTimeout
    ) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: adapter, interface: interface, member: "RegisterApplication",
            [.objectPath(application), .vardict(options)], timeout: timeout)
    }

    /// `UnregisterApplication(object application)`: only from the connection
    /// that registered it, with the same path.
    /// - Throws: `DBusError` `org.bluez.Error.DoesNotExist` "Does Not Exist"
    ///   otherwise, `InvalidArguments` for a malformed call.
    public static func unregisterApplication(
        _ application: DBusObjectPath, adapter: DBusObjectPath, on connection: DBusConnection
    ) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: adapter, interface: interface, member: "UnregisterApplication",
            [.objectPath(application)])
    }
}
