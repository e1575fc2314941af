import DBus

/// One `RegisterAdvertisement` on one adapter, from the moment bluetoothd
/// takes the call (it then counts against the instances, as bluetoothd queues
/// it before reading the object) until it is unregistered or dropped.
final class RegisteredAdvertisement {
    enum State { case pending, active }

    let id: UInt64
    /// The registering client's unique bus name.
    let owner: String
    let path: DBusObjectPath
    /// The advertising instance, 1 … SupportedInstances.
    let instance: UInt8
    var state = State.pending
    /// The properties as last read or changed, by name, variants unwrapped.
    var properties: [String: DBusValue] = [:]
    var content = AdvertisementContent()
    /// The advertiser's current random address; a new one makes a new Device1 on scanners.
    var address: DeviceAddress
    var discoverableTimedOut = false
    /// Registered but not on the air: a legacy controller could not restart it
    /// while scanning (see `SimulatorConfiguration.legacyAdvertising`).
    var offAir = false
    /// Follows PropertiesChanged on the advertisement object.
    var watch: Task<Void, Never>?
    var timeoutTimer: Task<Void, Never>?
    var discoverableTimer: Task<Void, Never>?

    init(id: UInt64, owner: String, path: DBusObjectPath, instance: UInt8, address: DeviceAddress) {
        self.id = id
        self.owner = owner
        self.path = path
        self.instance = instance
        self.address = address
    }

    /// Stops following the object and cancels its timers.
    func stop() {
        watch?.cancel()
        timeoutTimer?.cancel()
        discoverableTimer?.cancel()
        watch = nil
        timeoutTimer = nil
        discoverableTimer = nil
    }
}
