import DBus

/// Attribute Protocol error codes, and the two translations bluetoothd makes
/// between them and D-Bus errors: an application's error reply becomes an ATT
/// code on the air (`dbus_error_to_att_ecode` in src/gatt-database.c), and a
/// code received from the air becomes the error a client's call gets
/// (`create_gatt_dbus_error` in src/gatt-client.c). Both are 5.66's, checked
/// on the VM rig.
enum ATTError {
    static let readNotPermitted: UInt8 = 0x02
    static let writeNotPermitted: UInt8 = 0x03
    static let authentication: UInt8 = 0x05
    static let requestNotSupported: UInt8 = 0x06
    static let invalidOffset: UInt8 = 0x07
    static let authorization: UInt8 = 0x08
    static let insufficientEncryptionKeySize: UInt8 = 0x0C
    static let invalidAttributeValueLength: UInt8 = 0x0D
    static let unlikely: UInt8 = 0x0E
    static let insufficientEncryption: UInt8 = 0x0F
    /// BlueZ's own "already in progress" (a Common Profile and Service Error Code).
    static let alreadyInProgress: UInt8 = 0xFE

    /// The code bluetoothd puts on the air for an application's error reply.
    /// - Parameter permissionError: what `NotPermitted` becomes (read or write not permitted).
    static func code(forApplicationError error: DBusError, permissionError: UInt8) -> UInt8 {
        let prefix = "org.bluez.Error."
        switch error.name {
        case prefix + "Failed":
            // strtol(message, &end, 0): a whole number in 0x80…0x9f is the code;
            // text that is not a number is 0x80; any other number is "unlikely".
            guard let number = wholeNumber(error.message) else { return 0x80 }
            return (0x80...0x9F).contains(number) ? UInt8(number) : unlikely
        case prefix + "NotSupported": return requestNotSupported
        case prefix + "NotAuthorized": return authorization
        case prefix + "InvalidValueLength": return invalidAttributeValueLength
        case prefix + "InvalidOffset": return invalidOffset
        case prefix + "InProgress": return alreadyInProgress
        case prefix + "NotPermitted": return permissionError
        default: return unlikely
        }
    }

    /// The error a client's ReadValue/WriteValue/StartNotify gets for `code`.
    static func clientError(_ code: UInt8) -> DBusError {
        switch code {
        case readNotPermitted: BlueZError.notPermitted("Read not permitted")
        case writeNotPermitted: BlueZError.notPermitted("Write not permitted")
        case authentication, insufficientEncryption, insufficientEncryptionKeySize: BlueZError.notPermitted("Not paired")
        case invalidOffset: BlueZError.invalidArguments("Invalid offset")
        case invalidAttributeValueLength: BlueZError.invalidArguments("Invalid Length")
        case authorization: BlueZError.notAuthorized()
        case requestNotSupported: BlueZError.notSupported()
        case 0: BlueZError.failed("Operation failed")
        default: BlueZError.failed("Operation failed with ATT error: 0x" + DeviceAddress.hexByte(code).lowercased())
        }
    }

    /// The value strtol (base 0) reads when it consumes the whole string; nil when
    /// it stops early, or reads nothing from a non-empty string. An empty string
    /// reads as 0, as strtol leaves the end pointer on its terminator.
    static func wholeNumber(_ text: String) -> Int64? {
        var rest = Substring(text).drop { $0 == " " || $0 == "\t" || $0 == "\n" }
        if text.isEmpty { return 0 }
        var negative = false
        if let sign = rest.first, sign == "+" || sign == "-" {
            negative = sign == "-"
            rest = rest.dropFirst()
        }
        var radix = 10
        if rest.hasPrefix("0x") || rest.hasPrefix("0X") {
            radix = 16
            rest = rest.dropFirst(2)
        } else if rest.hasPrefix("0") && rest.count > 1 {
            radix = 8
        }
        guard !rest.isEmpty, let value = Int64(rest, radix: radix) else { return nil }
        return negative ? -value : value
    }
}

/// An ATT error response, by code.
struct ATTFailure: Error, Sendable {
    let code: UInt8
    init(_ code: UInt8) { self.code = code }
}
