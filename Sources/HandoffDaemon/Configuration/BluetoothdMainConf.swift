/// Reading bluetoothd's `main.conf` (GLib key-file syntax: `#` comments, `[Group]` headers,
/// `Key = value`), for `BluetoothdPrivacy` and `BluetoothdTemporaryTimeout`.
enum BluetoothdMainConf {
    /// The last value of `key` in the `[General]` group of a `main.conf`'s text, or nil when it is not set.
    static func generalValue(_ key: String, in text: String) -> String? {
        var group = ""
        var found: String?
        for rawLine in text.split(whereSeparator: \.isNewline) {
            let line = rawLine.trimmed()
            if line.isEmpty || line.hasPrefix("#") || line.hasPrefix(";") { continue }
            if line.hasPrefix("[") && line.hasSuffix("]") {
                group = String(line.dropFirst().dropLast())
                continue
            }
            guard group == "General", let equals = line.firstIndex(of: "=") else { continue }
            guard line[..<equals].trimmed() == key else { continue }
            found = String(line[line.index(after: equals)...].trimmed())
        }
        return found
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs (all a key file trims).
    fileprivate func trimmed() -> Substring {
        var slice = self
        while let first = slice.first, first == " " || first == "\t" { slice = slice.dropFirst() }
        while let last = slice.last, last == " " || last == "\t" { slice = slice.dropLast() }
        return slice
    }
}
