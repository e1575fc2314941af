import HandoffKit

/// Text from another device, made safe to show in a notification.
public enum DisplayText {
    /// `text` without the characters that an activity's title may not contain
    /// (`ActivityTitle.isForbidden`, docs/protocol.md): control characters (C0, DEL, C1)
    /// and the bidirectional formatting characters (U+061C, U+200E, U+200F, U+202A–U+202E,
    /// U+2066–U+2069), which could make a title read differently from what it is
    /// ("gpj.exe" shown as "exe.jpg"). Line breaks (also U+2028 and U+2029) and tabs
    /// become spaces; runs of spaces collapse; ends are trimmed.
    public static func sanitized(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var lastWasSpace = true
        for scalar in text.unicodeScalars {
            switch scalar.value {
            case 0x09, 0x0A, 0x0D, 0x20, 0x2028, 0x2029:
                if !lastWasSpace { out.append(" ") }
                lastWasSpace = true
            default:
                if ActivityTitle.isForbidden(scalar) { continue }
                out.append(scalar)
                lastWasSpace = false
            }
        }
        var result = String(out)
        while result.last == " " { result.removeLast() }
        return result
    }

    /// `text` for a notification body on a server with the "body-markup" capability,
    /// where `&`, `<` and `>` would be read as markup.
    public static func escapedMarkup(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for character in text {
            switch character {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            default: out.append(character)
            }
        }
        return out
    }
}
