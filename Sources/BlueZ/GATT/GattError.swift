import DBus

extension DBusError.Name {
    /// More `org.bluez.Error.*` names from BlueZ's GATT and device documentation.
    public static let bluezInvalidValueLength = DBusError.Name(rawValue: "org.bluez.Error.InvalidValueLength")
    public static let bluezInvalidOffset = DBusError.Name(rawValue: "org.bluez.Error.InvalidOffset")
    public static let bluezNotConnected = DBusError.Name(rawValue: "org.bluez.Error.NotConnected")
    public static let bluezAlreadyConnected = DBusError.Name(rawValue: "org.bluez.Error.AlreadyConnected")
    public static let bluezImproperlyConfigured = DBusError.Name(rawValue: "org.bluez.Error.ImproperlyConfigured")
    public static let bluezNotAvailable = DBusError.Name(rawValue: "org.bluez.Error.NotAvailable")
}

/// The errors a local GATT characteristic's handlers throw back to bluetoothd.
///
/// bluetoothd turns each into an ATT error code for the remote device (its
/// `dbus_error_to_att_ecode`), and the remote bluetoothd turns that code back
/// into a D-Bus error for its caller. What the remote caller finally sees:
///
/// | Thrown here | ATT code | Remote caller gets |
/// |---|---|---|
/// | `failed("0x80")` … `failed("0x9f")` | that code | `Failed` "Operation failed with ATT error: 0x80" |
/// | `failed(other text)` | 0x80 | `Failed` "Operation failed with ATT error: 0x80" |
/// | `invalidValueLength` | 0x0d | `InvalidArguments` "Invalid Length" |
/// | `invalidOffset` | 0x07 | `InvalidArguments` "Invalid offset" |
/// | `notPermitted` (read / write) | 0x02 / 0x03 | `NotPermitted` "Read not permitted" / "Write not permitted" |
/// | `notAuthorized` | 0x08 | `NotAuthorized` "Operation Not Authorized" |
/// | `notSupported` | 0x06 | `NotSupported` "Operation is not supported" |
/// | `inProgress` | 0xfe | `Failed` "Operation failed with ATT error: 0xfe" |
/// | any other error name | 0x0e | `Failed` "Operation failed with ATT error: 0x0e" |
///
/// The message itself never reaches the remote device (only the code does),
/// and none of this reaches it at all when the characteristic has the
/// `write-without-response` flag: bluetoothd then answers every write at once
/// and ignores the handler's reply.
public enum GattError {
    /// `org.bluez.Error.Failed` with an application error code (0x80 … 0x9f) as
    /// its message, the one way to pass a specific code to the remote device.
    public static func applicationError(_ code: UInt8) -> DBusError {
        let clamped = min(max(code, 0x80), 0x9f)
        return DBusError(name: DBusError.Name.bluezFailed.rawValue, message: "0x" + String(clamped, radix: 16))
    }

    /// The application error code (0x80 … 0x9f) a remote characteristic refused with, read back from the
    /// `org.bluez.Error.Failed` "Operation failed with ATT error: 0xNN" that bluetoothd gives its caller;
    /// nil for any other error.
    public static func applicationErrorCode(in error: DBusError) -> UInt8? {
        guard let end = endOfMatch(ignoringASCIICase: "att error: 0x", in: error.message),
            let code = UInt8(error.message[end...].prefix(2), radix: 16), (0x80...0x9f).contains(code)
        else { return nil }
        return code
    }

    /// Where the first occurrence of `needle` (lowercase ASCII) in `text` ends, ASCII letters
    /// compared without regard to case.
    private static func endOfMatch(ignoringASCIICase needle: String, in text: String) -> String.Index? {
        let pattern = Array(needle.utf8)
        let bytes = text.utf8
        var start = bytes.startIndex
        while bytes.distance(from: start, to: bytes.endIndex) >= pattern.count {
            var position = start
            var matched = true
            for wanted in pattern {
                let byte = bytes[position]
                let lowered = (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte) ? byte + 0x20 : byte
                if lowered != wanted {
                    matched = false
                    break
                }
                position = bytes.index(after: position)
            }
            if matched { return position }
            start = bytes.index(after: start)
        }
        return nil
    }

    /// `org.bluez.Error.Failed`; the remote device sees ATT error 0x80.
    public static func failed(_ message: String) -> DBusError {
        DBusError(name: DBusError.Name.bluezFailed.rawValue, message: message)
    }

    /// `org.bluez.Error.InvalidValueLength`: the value is too long or too short.
    public static func invalidValueLength(_ message: String = "Invalid value length") -> DBusError {
        DBusError(name: DBusError.Name.bluezInvalidValueLength.rawValue, message: message)
    }

    /// `org.bluez.Error.InvalidOffset`.
    public static func invalidOffset(_ message: String = "Invalid offset") -> DBusError {
        DBusError(name: DBusError.Name.bluezInvalidOffset.rawValue, message: message)
    }

    /// `org.bluez.Error.NotPermitted`: read or write not permitted.
    public static func notPermitted(_ message: String = "Not permitted") -> DBusError {
        DBusError(name: DBusError.Name.bluezNotPermitted.rawValue, message: message)
    }

    /// `org.bluez.Error.NotAuthorized`.
    public static func notAuthorized(_ message: String = "Not authorized") -> DBusError {
        DBusError(name: DBusError.Name.bluezNotAuthorized.rawValue, message: message)
    }

    /// `org.bluez.Error.NotSupported`: the operation is not supported on this characteristic.
    public static func notSupported(_ message: String = "Operation is not supported") -> DBusError {
        DBusError(name: DBusError.Name.bluezNotSupported.rawValue, message: message)
    }

    /// `org.bluez.Error.InProgress`.
    public static func inProgress(_ message: String = "In progress") -> DBusError {
        DBusError(name: DBusError.Name.bluezInProgress.rawValue, message: message)
    }
}
