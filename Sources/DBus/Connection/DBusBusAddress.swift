/// Which bus to connect to.
public enum DBusBusAddress: Sendable, Hashable {
    /// The system bus: `DBUS_SYSTEM_BUS_ADDRESS`, or `unix:path=/run/dbus/system_bus_socket`.
    case system
    /// The user's session bus: `DBUS_SESSION_BUS_ADDRESS`.
    case session
    /// An explicit address, such as a private test bus's `unix:path=/tmp/…`.
    case address(String)

    /// The default system bus socket, used when `DBUS_SYSTEM_BUS_ADDRESS` is unset.
    public static let defaultSystemAddress = "unix:path=/run/dbus/system_bus_socket"

    /// The address string libdbus will connect to.
    /// - Throws: `DBusError` when the session bus has no address.
    public func resolve(environment: [String: String]) throws(DBusError) -> String {
        switch self {
        case .system:
            return environment["DBUS_SYSTEM_BUS_ADDRESS"].flatMap { $0.isEmpty ? nil : $0 }
                ?? Self.defaultSystemAddress
        case .session:
            guard let address = environment["DBUS_SESSION_BUS_ADDRESS"], !address.isEmpty else {
                throw DBusError(.failed, "no session bus: DBUS_SESSION_BUS_ADDRESS is not set")
            }
            return address
        case .address(let address):
            return address
        }
    }
}
