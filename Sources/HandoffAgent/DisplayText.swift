/// Text from another device, made safe to show in a notification.
public enum DisplayText {
    /// `text` without control characters (C0, DEL, C1) and without the bidirectional
    /// embeddings, overrides and isolates U+202A–U+202E and U+2066–U+2069, which could
    /// make a title read differently from what it is ("gpj.exe" shown as "exe.jpg").
    /// Line breaks and tabs become spaces; runs of spaces collapse; ends are trimmed.
    public static func sanitized(_ text: String) -> String {
        var out = String.UnicodeScalarView()
        var lastWasSpace = true
        for scalar in text.unicodeScalars {
            let value = scalar.value
            if value == 0x09 || value == 0x0A || value == 0x0D || value == 0x20 {
                if !lastWasSpace { out.append(" ") }
                lastWasSpace = true
                continue
            }
            if value < 0x20 || (0x7F...0x9F).contains(value) { continue }
            if (0x202A...0x202E).contains(value) || (0x2066...0x2069).contains(value) { continue }
            out.append(scalar)
            lastWasSpace = false
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
