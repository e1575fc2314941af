import DBus

extension BlueZError {
    /// bluetoothd's `btd_error_not_authorized`.
    static func notAuthorized() -> DBusError {
        DBusError(name: prefix + "NotAuthorized", message: "Operation Not Authorized")
    }

    /// bluetoothd's `btd_error_not_connected`.
    static func notConnected() -> DBusError { DBusError(name: prefix + "NotConnected", message: "Not Connected") }

    /// bluetoothd's `btd_error_in_progress` ("In Progress"; `inProgress()` is `btd_error_busy`).
    static func gattInProgress() -> DBusError { DBusError(name: prefix + "InProgress", message: "In Progress") }
}
