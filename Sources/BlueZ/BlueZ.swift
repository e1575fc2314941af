import DBus

/// Names shared by every BlueZ interface.
public enum BlueZ {
    /// The bus name bluetoothd owns.
    public static let serviceName = "org.bluez"
    /// Where bluetoothd's object manager lives.
    public static let rootPath: DBusObjectPath = "/"
}

extension DBusError.Name {
    /// `org.bluez.Error.*` names returned by bluetoothd (see BlueZ's doc/org.bluez.*.rst).
    public static let bluezFailed = DBusError.Name(rawValue: "org.bluez.Error.Failed")
    public static let bluezNotReady = DBusError.Name(rawValue: "org.bluez.Error.NotReady")
    public static let bluezInProgress = DBusError.Name(rawValue: "org.bluez.Error.InProgress")
    public static let bluezNotAuthorized = DBusError.Name(rawValue: "org.bluez.Error.NotAuthorized")
    public static let bluezInvalidArguments = DBusError.Name(rawValue: "org.bluez.Error.InvalidArguments")
    public static let bluezAlreadyExists = DBusError.Name(rawValue: "org.bluez.Error.AlreadyExists")
    public static let bluezDoesNotExist = DBusError.Name(rawValue: "org.bluez.Error.DoesNotExist")
    public static let bluezInvalidLength = DBusError.Name(rawValue: "org.bluez.Error.InvalidLength")
    public static let bluezNotPermitted = DBusError.Name(rawValue: "org.bluez.Error.NotPermitted")
    public static let bluezNotSupported = DBusError.Name(rawValue: "org.bluez.Error.NotSupported")
}
