/// A characteristic's `Flags`, parsed as bluetoothd's `parse_chrc_flags` does
/// into the characteristic properties on the air and the value's permissions.
struct GattFlags: Sendable, Equatable {
    /// Characteristic Properties bits (Core Vol 3, Part G, 3.3.1.1).
    struct Properties: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let broadcast = Properties(rawValue: 0x01)
        static let read = Properties(rawValue: 0x02)
        static let writeWithoutResponse = Properties(rawValue: 0x04)
        static let write = Properties(rawValue: 0x08)
        static let notify = Properties(rawValue: 0x10)
        static let indicate = Properties(rawValue: 0x20)
        static let authenticatedSignedWrites = Properties(rawValue: 0x40)
        static let extendedProperties = Properties(rawValue: 0x80)
    }

    /// The strings as the application listed them (the remote side shows these).
    let names: [String]
    var properties: Properties = []
    /// Reliable Write or Writable Auxiliaries: a Characteristic Extended Properties descriptor.
    var reliableWrite = false
    var writableAuxiliaries = false
    var hasExtendedProperties = false
    var readable = false
    var writable = false

    /// Parses `names`; nil for an empty list or an unknown flag, which bluetoothd refuses.
    init?(_ names: [String]) {
        guard !names.isEmpty else { return nil }
        self.names = names
        for name in names {
            switch name {
            case "broadcast": properties.insert(.broadcast)
            case "read", "encrypt-read", "encrypt-authenticated-read", "secure-read":
                properties.insert(.read)
                readable = true
            case "write-without-response":
                properties.insert(.writeWithoutResponse)
                writable = true
            case "write", "encrypt-write", "encrypt-authenticated-write", "secure-write":
                properties.insert(.write)
                writable = true
            case "notify", "encrypt-notify", "encrypt-authenticated-notify", "secure-notify":
                properties.insert(.notify)
            case "indicate", "encrypt-indicate", "encrypt-authenticated-indicate", "secure-indicate":
                properties.insert(.indicate)
            case "authenticated-signed-writes":
                properties.insert(.authenticatedSignedWrites)
                writable = true
            case "extended-properties": properties.insert(.extendedProperties)
            case "reliable-write":
                reliableWrite = true
                hasExtendedProperties = true
                writable = true
            case "writable-auxiliaries":
                writableAuxiliaries = true
                hasExtendedProperties = true
            case "authorize": break
            default: return nil
            }
        }
        if hasExtendedProperties { properties.insert(.extendedProperties) }
    }

    /// Notifications or indications: a Client Characteristic Configuration descriptor.
    var canNotify: Bool { !properties.isDisjoint(with: [.notify, .indicate]) }

    /// The handles the characteristic takes: declaration and value, plus the CCC and CEP descriptors.
    var attributeCount: Int { 2 + (canNotify ? 1 : 0) + (hasExtendedProperties ? 1 : 0) }

    /// The flags a client sees on the remote characteristic (bluetoothd rebuilds
    /// them from the properties bits, so security variants show as the plain ones).
    var remoteNames: [String] {
        var out: [String] = []
        if properties.contains(.broadcast) { out.append("broadcast") }
        if properties.contains(.read) { out.append("read") }
        if properties.contains(.writeWithoutResponse) { out.append("write-without-response") }
        if properties.contains(.write) { out.append("write") }
        if properties.contains(.notify) { out.append("notify") }
        if properties.contains(.indicate) { out.append("indicate") }
        if properties.contains(.authenticatedSignedWrites) { out.append("authenticated-signed-writes") }
        if properties.contains(.extendedProperties) { out.append("extended-properties") }
        if reliableWrite { out.append("reliable-write") }
        if writableAuxiliaries { out.append("writable-auxiliaries") }
        return out
    }
}
