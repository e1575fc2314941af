import DBus

/// An `org.bluez.AdvertisementMonitor1` object of a registered monitor
/// application, as bluetoothd keeps it: active (Activate was sent) with its
/// patterns, and the devices it has reported with DeviceFound.
///
/// Confined to its `BluetoothDaemon`.
final class RegisteredMonitor {
    /// The client's unique bus name.
    let owner: String
    /// The application root given to RegisterMonitor.
    let application: DBusObjectPath
    /// The monitor object.
    let path: DBusObjectPath
    let patterns: [MonitorPattern]
    /// Devices reported found and not yet lost, by address.
    var found: Set<DeviceAddress> = []

    init(owner: String, application: DBusObjectPath, path: DBusObjectPath, patterns: [MonitorPattern]) {
        self.owner = owner
        self.application = application
        self.path = path
        self.patterns = patterns
    }

    /// True when any pattern matches (or-patterns).
    func matches(_ structures: [(type: UInt8, data: [UInt8])]) -> Bool {
        patterns.contains { $0.matches(structures) }
    }

    /// The most patterns the kernel takes in one monitor (reported by the VM
    /// rig's probe with bluetoothd 5.66 -E, docs/e2e.md).
    static let maximumPatterns = 16

    /// The most patterns bluetoothd can pass to the kernel without overrunning
    /// its heap: it sizes the mgmt command, 1 + 34 bytes a pattern, in a
    /// uint8_t (`BluetoothDaemon+Monitors.swift` stops the simulated bluetoothd
    /// beyond it, as bluetoothd aborts).
    static let heapSafePatterns = 7

    /// Reads one monitor object's properties: nil when bluetoothd would refuse
    /// it (Type other than "or_patterns", Patterns missing, empty, longer than
    /// `maximumPatterns` or with an invalid entry, or an RSSI property out of
    /// its documented range).
    static func parse(_ properties: [String: DBusValue]) -> [MonitorPattern]? {
        guard properties["Type"]?.string == "or_patterns",
            let entries = properties["Patterns"]?.arrayElements, (1...maximumPatterns).contains(entries.count)
        else { return nil }
        var patterns: [MonitorPattern] = []
        for entry in entries {
            guard case .structure(let fields) = entry.unwrapped, fields.count == 3,
                case .byte(let start) = fields[0], case .byte(let type) = fields[1], let content = fields[2].bytes
            else { return nil }
            let pattern = MonitorPattern(start: Int(start), adType: type, content: content)
            guard pattern.isValid else { return nil }
            patterns.append(pattern)
        }
        if let low = properties["RSSILowThreshold"]?.integer, !(-127...20).contains(low) && low != 127 { return nil }
        if let high = properties["RSSIHighThreshold"]?.integer, !(-127...20).contains(high) && high != 127 { return nil }
        return patterns
    }
}
