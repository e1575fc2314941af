/// One advertising report as a scanning adapter hears it: what the
/// controller's "LE Advertising Report" plus the scan response carry,
/// already split into the fields bluetoothd's EIR parser extracts.
struct AirReport: Sendable {
    /// The advertising adapter, such as "hci0".
    var advertiser: String
    var address: DeviceAddress
    /// ADV_IND (peripheral) rather than ADV_NONCONN_IND (broadcast).
    var connectable: Bool
    var flags: UInt8
    var manufacturerData: [AdvertisementContent.ManufacturerEntry]
    var serviceData: [AdvertisementContent.ServiceDataEntry]
    /// 128-bit lowercase UUID strings, as bluetoothd lists them.
    var uuids: [String]
    /// From the scan response; `nameComplete` is false when it was shortened.
    var name: String?
    var nameComplete = true
    var appearance: UInt16?
    var txPower: Int16?
    var rssi: Int16 = 0
}

extension AirReport {
    /// The longest local name a scan response holds whole: MaxScnRspLen less the AD header.
    static let maximumNameLength = 29

    /// What `content`, advertised by `advertiser` from `address`, sounds like on the air.
    init(
        advertiser: String, address: DeviceAddress, content: AdvertisementContent, adapterAlias: String,
        adapterDiscoverable: Bool, discoverableTimedOut: Bool
    ) {
        self.advertiser = advertiser
        self.address = address
        connectable = content.kind == .peripheral
        flags = content.flagsOnAir(adapterDiscoverable: adapterDiscoverable, discoverableTimedOut: discoverableTimedOut)
        manufacturerData = content.manufacturerData
        serviceData = content.serviceData
        var uuids: [String] = []
        for uuid in content.serviceUUIDs where !uuids.contains(uuid.canonical) { uuids.append(uuid.canonical) }
        self.uuids = uuids
        let fullName = content.localName ?? (content.includes.contains(.localName) ? adapterAlias : nil)
        if let fullName, !fullName.isEmpty {
            var utf8 = Array(fullName.utf8)
            if utf8.count > Self.maximumNameLength {
                utf8 = Array(utf8.prefix(Self.maximumNameLength))
                nameComplete = false
            }
            name = String(decoding: utf8, as: UTF8.self)
        }
        if let value = content.appearance, value != 0 { appearance = value }
        if content.includes.contains(.txPower) { txPower = content.txPower ?? 0 }
    }
}

extension AirReport {
    /// The AD structures monitors match against, as (type, data): Flags,
    /// Manufacturer Specific Data (company ID little-endian, then the bytes)
    /// and the local name. Service data and UUID lists are not modelled here.
    var adStructures: [(type: UInt8, data: [UInt8])] {
        var out: [(type: UInt8, data: [UInt8])] = [(0x01, [flags])]
        for entry in manufacturerData {
            out.append((0xFF, [UInt8(entry.company & 0xFF), UInt8(entry.company >> 8)] + entry.bytes))
        }
        if let name { out.append((nameComplete ? 0x09 : 0x08, Array(name.utf8))) }
        return out
    }
}
