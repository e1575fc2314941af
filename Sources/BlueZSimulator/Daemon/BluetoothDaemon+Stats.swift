import DBus

extension BluetoothDaemon {
    /// Gauges for GetStats: what exists right now.
    func gauges() -> [String: DBusValue] {
        var advertisements = 0
        var sessions = 0
        var devices = 0
        for adapter in adapters.values {
            advertisements += adapter.activeAdvertisements.count
            sessions += adapter.clients.values.filter(\.discovering).count
            devices += adapter.devices.count
        }
        return [
            "ActiveAdvertisements": .uint32(UInt32(advertisements)),
            "DiscoverySessions": .uint32(UInt32(sessions)),
            "Devices": .uint32(UInt32(devices)),
            "FloodRunning": .boolean(flood.map { !$0.finished } ?? false),
        ]
    }
}
