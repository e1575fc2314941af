import DBus

/// The filter passed to `Adapter1.SetDiscoveryFilter`.
///
/// handoff always scans with `transport: "le"` and `duplicateData: true`.
/// Setting any filter also stops bluetoothd from dropping advertisements that
/// carry no Discoverable flag, which our non-connectable beacons lack.
public struct DiscoveryFilter: Sendable, Equatable {
    /// Service UUIDs to match; empty matches any.
    public var uuids: [String] = []
    /// Report only devices received above this RSSI.
    public var rssi: Int16?
    /// Report only devices whose path loss is below this.
    public var pathloss: UInt16?
    /// "auto", "bredr" or "le".
    public var transport: String? = "le"
    /// Report every advertisement, not only changed ones.
    public var duplicateData: Bool? = true
    /// Make the adapter discoverable while discovering.
    public var discoverable: Bool?
    /// Match devices whose address or name starts with this.
    public var pattern: String?

    public init(
        uuids: [String] = [], rssi: Int16? = nil, pathloss: UInt16? = nil, transport: String? = "le",
        duplicateData: Bool? = true, discoverable: Bool? = nil, pattern: String? = nil
    ) {
        self.uuids = uuids
        self.rssi = rssi
        self.pathloss = pathloss
        self.transport = transport
        self.duplicateData = duplicateData
        self.discoverable = discoverable
        self.pattern = pattern
    }

    /// The filter handoff uses: LE only, every advertisement reported.
    public static let handoff = DiscoveryFilter()

    /// The `a{sv}` bluetoothd expects.
    public var dbusValue: DBusValue {
        var entries: [String: DBusValue] = [:]
        if !uuids.isEmpty { entries["UUIDs"] = .strings(uuids) }
        if let rssi { entries["RSSI"] = .int16(rssi) }
        if let pathloss { entries["Pathloss"] = .uint16(pathloss) }
        if let transport { entries["Transport"] = .string(transport) }
        if let duplicateData { entries["DuplicateData"] = .boolean(duplicateData) }
        if let discoverable { entries["Discoverable"] = .boolean(discoverable) }
        if let pattern { entries["Pattern"] = .string(pattern) }
        return .vardict(entries)
    }
}
