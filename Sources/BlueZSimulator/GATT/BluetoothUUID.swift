/// A Bluetooth UUID as bluetoothd parses one from a D-Bus string: 16-bit
/// (`"180d"`, `"0x180D"`, or the full form on the Bluetooth base UUID),
/// 32-bit (`"0x12345678"`), or 128-bit.
struct BluetoothUUID: Hashable, Sendable {
    enum Width: Int, Sendable { case bits16 = 2, bits32 = 4, bits128 = 16 }

    /// How many bytes the UUID takes in advertising data.
    let width: Width
    /// The full 128-bit form, lowercase, as Device1.UUIDs and ServiceData keys show it.
    let canonical: String

    static let baseSuffix = "-0000-1000-8000-00805f9b34fb"

    /// Parses like bluetoothd's `bt_string_to_uuid`; nil when it would refuse the string.
    init?(_ text: String) {
        let lower = text.lowercased()
        let chars = Array(lower)
        if chars.count == 36, chars[8] == "-", chars[13] == "-", chars[18] == "-", chars[23] == "-" {
            let hex = lower.replacingOccurrences(of: "-", with: "")
            guard hex.count == 32, hex.allSatisfy(\.isHexDigit) else { return nil }
            if lower.hasPrefix("0000"), lower.hasSuffix(Self.baseSuffix) {
                width = .bits16
            } else {
                width = .bits128
            }
            canonical = lower
            return
        }
        let digits = lower.hasPrefix("0x") ? String(lower.dropFirst(2)) : lower
        switch chars.count {
        case 8, 10:
            guard let value = UInt32(digits, radix: 16) else { return nil }
            width = .bits32
            canonical = Self.hex(value, digits: 8) + Self.baseSuffix
        case 4, 6:
            guard let value = UInt16(digits, radix: 16) else { return nil }
            width = .bits16
            canonical = "0000" + Self.hex(UInt32(value), digits: 4) + Self.baseSuffix
        default:
            return nil
        }
    }

    private static func hex(_ value: UInt32, digits: Int) -> String {
        let text = String(value, radix: 16)
        return String(repeating: "0", count: max(0, digits - text.count)) + text
    }
}
