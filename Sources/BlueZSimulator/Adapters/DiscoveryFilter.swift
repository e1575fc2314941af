import DBus

/// One client's `SetDiscoveryFilter` settings, parsed and checked the way
/// bluetoothd's `parse_discovery_filter_dict` does.
struct DiscoveryFilter: Sendable, Equatable, CustomStringConvertible {
    /// The transports to scan. The simulated adapters are LE-only, so "auto" means LE.
    struct Transport: OptionSet, Sendable, Hashable {
        let rawValue: UInt8
        static let bredr = Transport(rawValue: 1)
        static let le = Transport(rawValue: 2)
    }

    /// 128-bit lowercase UUID strings; empty means any.
    var uuids: [String] = []
    var rssi: Int16?
    var pathloss: UInt16?
    var transport: Transport = .le
    var duplicateData = false
    var discoverable = false
    var pattern: String?

    var description: String {
        var parts = [transport == .bredr ? "Transport=bredr" : "Transport=le"]
        if !uuids.isEmpty { parts.append("UUIDs=\(uuids.joined(separator: ","))") }
        if let rssi { parts.append("RSSI=\(rssi)") }
        if let pathloss { parts.append("Pathloss=\(pathloss)") }
        if duplicateData { parts.append("DuplicateData") }
        if discoverable { parts.append("Discoverable") }
        if let pattern { parts.append("Pattern='\(pattern)'") }
        return parts.joined(separator: " ")
    }

    /// The keys bluetoothd accepts, in its order (`GetDiscoveryFilters`).
    static let keys = ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"]

    /// bluetoothd's PATHLOSS_MAX.
    static let maximumPathloss: UInt16 = 137

    /// Parses a filter dictionary: nil for an empty one (which clears the
    /// client's filter), `InvalidArguments` for an unknown key, a value of the
    /// wrong type or out of range, or both RSSI and Pathloss.
    static func parse(_ entries: [(key: DBusValue, value: DBusValue)]) throws(DBusError) -> DiscoveryFilter? {
        guard !entries.isEmpty else { return nil }
        var filter = DiscoveryFilter()
        for (key, wrapped) in entries {
            guard case .string(let name) = key, case .variant(let value) = wrapped else {
                throw BlueZError.invalidArguments()
            }
            switch (name, value) {
            case ("UUIDs", .array(.string, let elements)):
                for case .string(let text) in elements {
                    guard let uuid = BluetoothUUID(text) else { throw BlueZError.invalidArguments() }
                    filter.uuids.insert(uuid.canonical, at: 0)
                }
            case ("RSSI", .int16(let rssi)):
                guard (-127...20).contains(rssi) else { throw BlueZError.invalidArguments() }
                filter.rssi = rssi
            case ("Pathloss", .uint16(let pathloss)):
                guard pathloss <= maximumPathloss else { throw BlueZError.invalidArguments() }
                filter.pathloss = pathloss
            case ("Transport", .string(let transport)):
                switch transport {
                case "bredr": filter.transport = .bredr
                case "le": filter.transport = .le
                case "auto": filter.transport = .le
                default: throw BlueZError.invalidArguments()
                }
            case ("DuplicateData", .boolean(let flag)):
                filter.duplicateData = flag
            case ("Discoverable", .boolean(let flag)):
                filter.discoverable = flag
            case ("Pattern", .string(let pattern)):
                filter.pattern = pattern
            default:
                throw BlueZError.invalidArguments()
            }
        }
        if filter.rssi != nil && filter.pathloss != nil { throw BlueZError.invalidArguments() }
        return filter
    }
}
