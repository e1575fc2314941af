/// Validation of the names that appear in D-Bus message headers.
///
/// libdbus aborts the process when handed an invalid name, so every name is
/// checked here first and rejected with a `DBusError` instead.
public enum DBusNames {
    /// Maximum length of any name.
    public static let maximumLength = 255

    static func isPathElementByte(_ b: UInt8) -> Bool {
        (b >= UInt8(ascii: "a") && b <= UInt8(ascii: "z")) || (b >= UInt8(ascii: "A") && b <= UInt8(ascii: "Z"))
            || (b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9")) || b == UInt8(ascii: "_")
    }

    private static func isDigit(_ b: UInt8) -> Bool { b >= UInt8(ascii: "0") && b <= UInt8(ascii: "9") }

    /// True for an interface name such as `org.bluez.Adapter1` (also the rule for error names).
    public static func isValidInterface(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        var elements = 0
        var elementLength = 0
        for b in bytes {
            if b == UInt8(ascii: ".") {
                guard elementLength > 0 else { return false }
                elements += 1
                elementLength = 0
            } else {
                guard isPathElementByte(b), !(elementLength == 0 && isDigit(b)) else { return false }
                elementLength += 1
            }
        }
        guard elementLength > 0 else { return false }
        return elements + 1 >= 2
    }

    /// True for an error name such as `org.bluez.Error.NotPermitted`.
    public static func isValidErrorName(_ name: String) -> Bool { isValidInterface(name) }

    /// True for a member (method or signal) name such as `RegisterAdvertisement`.
    public static func isValidMember(_ name: String) -> Bool {
        let bytes = name.utf8
        guard let first = bytes.first, bytes.count <= maximumLength, !isDigit(first) else { return false }
        return bytes.allSatisfy(isPathElementByte)
    }

    /// True for a bus name: a unique name such as `:1.42` or a well-known one such as `org.bluez`.
    public static func isValidBusName(_ name: String) -> Bool {
        let bytes = Array(name.utf8)
        guard !bytes.isEmpty, bytes.count <= maximumLength else { return false }
        let unique = bytes[0] == UInt8(ascii: ":")
        var elements = 0
        var elementLength = 0
        for b in bytes.dropFirst(unique ? 1 : 0) {
            if b == UInt8(ascii: ".") {
                guard elementLength > 0 else { return false }
                elements += 1
                elementLength = 0
            } else {
                guard isPathElementByte(b) || b == UInt8(ascii: "-") else { return false }
                if !unique && elementLength == 0 && isDigit(b) { return false }
                elementLength += 1
            }
        }
        guard elementLength > 0 else { return false }
        return elements + 1 >= 2
    }

    /// True for a string that D-Bus can carry: no NUL byte (Swift strings are always valid Unicode).
    public static func isValidString(_ text: String) -> Bool {
        !text.utf8.contains(0)
    }
}
