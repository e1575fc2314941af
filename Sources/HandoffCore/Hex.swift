/// Lowercase hexadecimal encoding and strict decoding (internal helpers).
enum Hex {
    private static let digits = Array("0123456789abcdef".utf8)

    /// `bytes` as lowercase hex.
    static func encode(_ bytes: some Sequence<UInt8>) -> String {
        var utf8 = [UInt8]()
        for byte in bytes {
            utf8.append(digits[Int(byte >> 4)])
            utf8.append(digits[Int(byte & 0x0f)])
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// `value` as exactly `width` lowercase hex digits.
    static func encode<T: FixedWidthInteger>(_ value: T, width: Int) -> String {
        var utf8 = [UInt8](repeating: 0, count: width)
        var rest = value
        for index in stride(from: width - 1, through: 0, by: -1) {
            utf8[index] = digits[Int(truncatingIfNeeded: rest & 0x0f)]
            rest >>= 4
        }
        return String(decoding: utf8, as: UTF8.self)
    }

    /// Decodes an even number of hex digits (either case); nil for anything else.
    static func decode(_ text: some StringProtocol) -> [UInt8]? {
        let utf8 = Array(text.utf8)
        guard utf8.count % 2 == 0 else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(utf8.count / 2)
        var index = 0
        while index < utf8.count {
            guard let high = value(of: utf8[index]), let low = value(of: utf8[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }

    /// Whether `text` consists of lowercase hex digits only (`0-9`, `a-f`).
    static func isLowercase(_ text: some StringProtocol) -> Bool {
        text.utf8.allSatisfy { digits.contains($0) }
    }

    private static func value(of digit: UInt8) -> UInt8? {
        switch digit {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
