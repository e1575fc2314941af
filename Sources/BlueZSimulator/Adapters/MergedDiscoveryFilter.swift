/// The filters of every discovering client of one adapter, merged the way
/// bluetoothd builds the kernel's service-discovery filter.
struct MergedDiscoveryFilter: Sendable, Equatable {
    /// True when at least one discovering client set a filter: then bluetoothd
    /// stops dropping advertisements without a Discoverable flag.
    var filtered = false
    var transport: DiscoveryFilter.Transport = .le
    /// The kernel-side RSSI threshold, if every filtering client set one (the lowest wins).
    var rssi: Int16?
    /// The kernel-side UUID filter; empty when any client wants every UUID.
    var uuids: Set<String> = []
    /// Any discovering client asked for DuplicateData.
    var duplicateData = false
    /// Any discovering client asked to make the adapter discoverable.
    var discoverable = false
    /// The Pattern of each discovering client that set one.
    var patterns: [String] = []

    init() {}

    init(_ filters: [DiscoveryFilter?]) {
        var hasRegular = false
        var anyEmptyUUIDs = false
        var lowestRSSI: Int16?
        var proximityEverywhere = true
        var transport: DiscoveryFilter.Transport = []
        for case let filter? in filters {
            filtered = true
            transport.formUnion(filter.transport)
            if let rssi = filter.rssi {
                lowestRSSI = min(lowestRSSI ?? rssi, rssi)
            } else {
                proximityEverywhere = false
            }
            if filter.uuids.isEmpty { anyEmptyUUIDs = true }
            uuids.formUnion(filter.uuids)
            duplicateData = duplicateData || filter.duplicateData
            discoverable = discoverable || filter.discoverable
            if let pattern = filter.pattern { patterns.append(pattern) }
        }
        hasRegular = filters.contains { $0 == nil }
        self.transport = filtered ? transport : .le
        rssi = proximityEverywhere ? lowestRSSI : nil
        if anyEmptyUUIDs { uuids = [] }
        if hasRegular && filtered {
            // Regular and filtered discovery together: the kernel filter is cleared.
            self.transport = .le
            rssi = nil
            uuids = []
        }
    }
}
