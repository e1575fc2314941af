/// One `(yyay)` entry of an `or_patterns` monitor's Patterns: start position,
/// AD type, content (org.bluez.AdvertisementMonitor(5)).
struct MonitorPattern: Sendable, Equatable {
    var start: Int
    var adType: UInt8
    var content: [UInt8]

    /// The most bytes an AD structure's data holds in a legacy advertisement,
    /// and the documented maximum of a pattern.
    static let maximumLength = 31

    /// What bluetoothd's parser accepts: 1…31 bytes ending within 31 bytes.
    var isValid: Bool { !content.isEmpty && start + content.count <= Self.maximumLength }

    /// True when an AD structure of our type holds the content at our start.
    func matches(_ structures: [(type: UInt8, data: [UInt8])]) -> Bool {
        structures.contains { structure in
            structure.type == adType && structure.data.count >= start + content.count
                && Array(structure.data[start..<start + content.count]) == content
        }
    }
}
