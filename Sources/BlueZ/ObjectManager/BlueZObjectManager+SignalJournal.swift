import DBus

extension BlueZObjectManager {
    /// What signals changed while a snapshot was loading. The reply may have
    /// been sent before or after any of them, but bluetoothd signals every
    /// change, so a property a signal set meanwhile is at least as new in the
    /// tree as in the snapshot, and an interface a signal removed meanwhile
    /// (and no later signal added back) is gone.
    struct SignalJournal {
        /// path → interface → property names set by a signal.
        var touched: [DBusObjectPath: [String: Set<String>]] = [:]
        /// path → interfaces removed by a signal.
        var removed: [DBusObjectPath: Set<String>] = [:]

        mutating func set(_ path: DBusObjectPath, _ interface: String, _ names: some Sequence<String>) {
            touched[path, default: [:]][interface, default: []].formUnion(names)
            removed[path]?.remove(interface)
        }

        mutating func remove(_ path: DBusObjectPath, _ interfaces: [String]) {
            removed[path, default: []].formUnion(interfaces)
            for interface in interfaces { touched[path]?[interface] = nil }
        }
    }
}
