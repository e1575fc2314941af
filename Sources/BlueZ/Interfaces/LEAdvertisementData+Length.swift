extension LEAdvertisementData {
    /// The bytes of advertising data bluetoothd builds from these properties,
    /// counted as its `bt_ad_generate` counts them: each Manufacturer Specific
    /// Data entry 4 + data, each list of service UUIDs 2 + count × size (16-bit,
    /// 32-bit or 128-bit; a 128-bit UUID on the Bluetooth base UUID counts as
    /// 16-bit), a 3-byte Flags field when `discoverable` is true, and 4 for the
    /// "appearance" include. The local name goes to the scan response.
    public var advertisingDataLength: Int {
        var length = 0
        for data in manufacturerData.values { length += 4 + data.count }
        var sizes: [Int: Int] = [:]
        for uuid in serviceUUIDs { sizes[Self.uuidSize(uuid), default: 0] += 1 }
        for (size, count) in sizes { length += 2 + count * size }
        if discoverable == true { length += 3 }
        if includes.contains("appearance") { length += 4 }
        return length
    }

    /// What `maxAdvertisingLength` (the adapter's `MaxAdvLen`, 31 on legacy
    /// controllers) leaves for `advertisingDataLength`: bluetoothd keeps 3
    /// bytes for the "tx-power" include. (The kernel may also add 3 bytes of
    /// Flags to a connectable advertisement while the adapter is discoverable.)
    public func advertisingDataBudget(maxAdvertisingLength: Int) -> Int {
        maxAdvertisingLength - (includes.contains("tx-power") ? 3 : 0)
    }

    /// 2, 4 or 16: how many bytes a service UUID takes in advertising data.
    static func uuidSize(_ uuid: String) -> Int {
        let hex = uuid.lowercased().filter { $0 != "-" }
        switch hex.count {
        case 4: return 2
        case 8: return 4
        case 32:
            guard hex.hasSuffix("00001000800000805f9b34fb") else { return 16 }
            return hex.hasPrefix("0000") ? 2 : 4
        default: return 16
        }
    }
}
