/// What an activity's title may contain (docs/protocol.md, publish): it is
/// shown on other devices, so characters that hide or reorder text there are
/// refused rather than stored.
public enum ActivityTitle {
    /// Why `title` is refused, or nil when it is acceptable: it must not contain
    /// control characters (C0 with NUL, tab and line feed, DEL, C1), the line and
    /// paragraph separators, or bidirectional formatting characters (U+061C,
    /// U+200E, U+200F, U+202A to U+202E, U+2066 to U+2069).
    public static func problem(_ title: String) -> String? {
        for (offset, scalar) in title.unicodeScalars.enumerated() {
            guard let kind = kind(of: scalar.value) else { continue }
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            return "title: character \(offset + 1) is \(code), \(kind); titles may not contain control characters, line separators or bidirectional formatting characters"
        }
        return nil
    }

    /// Whether `scalar` is one that a title may not contain (what `problem` looks for),
    /// for a client that shows text from elsewhere and removes these rather than refusing it.
    public static func isForbidden(_ scalar: Unicode.Scalar) -> Bool {
        kind(of: scalar.value) != nil
    }

    private static func kind(of value: UInt32) -> String? {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F: return "a control character"
        case 0x2028, 0x2029: return "a line or paragraph separator"
        case 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: return "a bidirectional formatting character"
        default: return nil
        }
    }
}
