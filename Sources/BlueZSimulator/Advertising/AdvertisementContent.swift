import DBus

/// The content of an `org.bluez.LEAdvertisement1` object, parsed and checked
/// as bluetoothd's `parse_advertisement` does, and the advertising data it
/// makes.
struct AdvertisementContent: Sendable, Equatable {
    enum Kind: String, Sendable { case broadcast, peripheral }

    /// Things bluetoothd can add to the packet for the client (`SupportedIncludes`).
    enum Include: String, Sendable, CaseIterable { case txPower = "tx-power", appearance, localName = "local-name" }

    struct ManufacturerEntry: Sendable, Equatable {
        var company: UInt16
        var bytes: [UInt8]
    }

    struct ServiceDataEntry: Sendable, Equatable {
        var uuid: BluetoothUUID
        var bytes: [UInt8]
    }

    struct TypedData: Sendable, Equatable {
        var type: UInt8
        var bytes: [UInt8]
    }

    var kind: Kind = .broadcast
    var serviceUUIDs: [BluetoothUUID] = []
    var solicitUUIDs: [BluetoothUUID] = []
    var manufacturerData: [ManufacturerEntry] = []
    var serviceData: [ServiceDataEntry] = []
    var data: [TypedData] = []
    var includes: Set<Include> = []
    var localName: String?
    var appearance: UInt16?
    var duration: UInt16 = 0
    var timeout: UInt16 = 0
    /// The Discoverable property, when present.
    var discoverable: Bool?
    var discoverableTimeout: UInt16 = 0
    /// In units of 0.625 ms, as bluetoothd converts them.
    var minInterval: UInt32 = 0
    var maxInterval: UInt32 = 0
    var txPower: Int16?

    // MARK: Flags (Core Specification Supplement, Part A, 1.3)

    static let flagLimited: UInt8 = 0x01
    static let flagGeneral: UInt8 = 0x02
    static let flagNoBREDR: UInt8 = 0x04

    /// The Flags field bluetoothd itself puts in the data: only when the
    /// client set Discoverable to true (5.66 adds none for false). Limited
    /// discoverable while a DiscoverableTimeout runs. The simulated adapters
    /// are LE-only, so "BR/EDR not supported" is always set.
    func dataFlags(discoverableTimedOut: Bool) -> UInt8? {
        guard discoverable == true, !discoverableTimedOut else { return nil }
        return (discoverableTimeout > 0 ? Self.flagLimited : Self.flagGeneral) | Self.flagNoBREDR
    }

    /// True when the kernel adds a general-discoverable Flags field itself:
    /// a peripheral advertisement with no Flags of its own on a discoverable adapter.
    func kernelAddsDiscoverableFlag(adapterDiscoverable: Bool, discoverableTimedOut: Bool) -> Bool {
        kind == .peripheral && adapterDiscoverable && dataFlags(discoverableTimedOut: discoverableTimedOut) == nil
    }

    /// The Flags byte a scanner receives.
    func flagsOnAir(adapterDiscoverable: Bool, discoverableTimedOut: Bool) -> UInt8 {
        if let flags = dataFlags(discoverableTimedOut: discoverableTimedOut) { return flags }
        let general =
            kernelAddsDiscoverableFlag(adapterDiscoverable: adapterDiscoverable, discoverableTimedOut: discoverableTimedOut)
            ? Self.flagGeneral : 0
        return general | Self.flagNoBREDR
    }

    // MARK: Length

    /// The length of the advertising data bluetoothd generates (`bt_ad_generate`).
    func advertisingDataLength(discoverableTimedOut: Bool) -> Int {
        var length = Self.uuidListLength(serviceUUIDs) + Self.uuidListLength(solicitUUIDs)
        length += manufacturerData.reduce(0) { $0 + 4 + $1.bytes.count }
        length += serviceData.reduce(0) { $0 + 2 + $1.uuid.width.rawValue + $1.bytes.count }
        if appearance != nil || includes.contains(.appearance) { length += 4 }
        length += data.reduce(0) { $0 + 2 + $1.bytes.count }
        if dataFlags(discoverableTimedOut: discoverableTimedOut) != nil { length += 3 }
        return length
    }

    /// The room bluetoothd allows (`calc_max_adv_len`): MaxAdvLen less what the
    /// kernel will add (TX power, Flags, appearance).
    func advertisingBudget(maxLength: Int, adapterDiscoverable: Bool, discoverableTimedOut: Bool) -> Int {
        var budget = maxLength
        if includes.contains(.txPower) { budget -= 3 }
        if kernelAddsDiscoverableFlag(adapterDiscoverable: adapterDiscoverable, discoverableTimedOut: discoverableTimedOut) {
            budget -= 3
        }
        if includes.contains(.appearance) { budget -= 4 }
        return budget
    }

    /// Throws `tooLong` when the data does not fit.
    func checkLength(maxLength: Int, adapterDiscoverable: Bool, discoverableTimedOut: Bool = false)
        throws(AdvertisementProblem)
    {
        let length = advertisingDataLength(discoverableTimedOut: discoverableTimedOut)
        let budget = advertisingBudget(
            maxLength: maxLength, adapterDiscoverable: adapterDiscoverable, discoverableTimedOut: discoverableTimedOut)
        if length > min(budget, maxLength) { throw .tooLong(length: length, budget: min(budget, maxLength)) }
    }

    private static func uuidListLength(_ uuids: [BluetoothUUID]) -> Int {
        let widths = Set(uuids.map(\.width))
        return uuids.reduce(0) { $0 + $1.width.rawValue } + 2 * widths.count
    }
}
