import DBus

/// The `org.bluez.Error.*` replies, with the names and messages bluetoothd 5.66
/// sends (see its `src/error.c`).
enum BlueZError {
    static let prefix = "org.bluez.Error."

    static func invalidArguments(_ message: String = "Invalid arguments in method call") -> DBusError {
        DBusError(name: prefix + "InvalidArguments", message: message)
    }

    /// What bluetoothd's `btd_error_busy` sends: a second StartDiscovery from one client.
    static func inProgress(_ message: String = "Operation already in progress") -> DBusError {
        DBusError(name: prefix + "InProgress", message: message)
    }

    static func alreadyExists() -> DBusError { DBusError(name: prefix + "AlreadyExists", message: "Already Exists") }

    static func doesNotExist() -> DBusError { DBusError(name: prefix + "DoesNotExist", message: "Does Not Exist") }

    static func notReady() -> DBusError { DBusError(name: prefix + "NotReady", message: "Resource Not Ready") }

    static func notSupported(_ message: String = "Operation is not supported") -> DBusError {
        DBusError(name: prefix + "NotSupported", message: message)
    }

    static func notPermitted(_ message: String) -> DBusError { DBusError(name: prefix + "NotPermitted", message: message) }

    static func failed(_ message: String) -> DBusError { DBusError(name: prefix + "Failed", message: message) }

    /// The reply to advertising data that does not fit, under the configured error name.
    static func tooLong(name: String, length: Int, budget: Int) -> DBusError {
        if name == prefix + "Failed" {
            // What bluetoothd 5.66 really sends on an extended-advertising kernel.
            return failed("Failed to register advertisement")
        }
        return DBusError(name: name, message: "Advertising data too long: \(length) bytes, at most \(budget)")
    }
}
