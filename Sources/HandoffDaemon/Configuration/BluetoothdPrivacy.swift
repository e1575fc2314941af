import BlueZ

/// What bluetoothd's `main.conf` says about LE privacy, and what it means for
/// our advertisement.
///
/// A connectable (`peripheral`) advertisement goes out from the address the
/// kernel picks for connectable advertising: with `[General] Privacy = off`,
/// bluetoothd's default, that is the adapter's public address, which never
/// changes and would link every beacon of the device, however well the
/// payload rotates. With any other value (`device`, `network`, `on`,
/// `limited-device`, `limited-network`) the kernel advertises from a
/// resolvable private address. A non-connectable (`broadcast`) advertisement
/// gets a fresh random address at every registration either way.
///
/// So `advertisement_type = "auto"` (the default) advertises connectably,
/// which continuing an activity from this device needs, only when privacy is
/// on; otherwise it keeps the beacon unlinkable and says why it cannot be
/// continued from here.
public struct BluetoothdPrivacy: Sendable, Equatable {
    /// The `Privacy` value, lowercased, or nil when the file does not set it.
    public var value: String?

    public init(value: String?) {
        self.value = value
    }

    /// Reads `[General] Privacy` from the text of a `main.conf` (GLib key-file
    /// syntax: `#` comments, `[Group]` headers, `Key = value`).
    public init(mainConf text: String) {
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
            let key = line[..<equals].trimmed()
            guard key == "Privacy" else { continue }
            found = line[line.index(after: equals)...].trimmed().lowercased()
        }
        value = found
    }

    /// True when the kernel advertises connectably from a private address.
    public var isPrivate: Bool {
        guard let value, !value.isEmpty else { return false }
        return !["off", "false", "no", "0"].contains(value)
    }

    /// The advertisement type for `advertisement_type = "auto"`.
    public var automaticType: LEAdvertisementData.AdvertisingType {
        isPrivate ? .peripheral : .broadcast
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
