import DBus

/// One LE connection between two simulated adapters, from `Device1.Connect`
/// until it is torn down. bluetoothd runs on both ends: each end has a
/// Device1 for the other and a GATT client of the other's database.
///
/// Confined to its `BluetoothDaemon`.
final class LELink {
    enum State { case connecting, connected, disconnecting }

    let id: UInt64
    /// The adapter that called Connect (the LE central).
    let central: String
    /// The advertising adapter (the LE peripheral); nil while no connectable advertiser answered.
    var peripheral: String?
    /// The advertiser was found while the central discovered: the kernel starts
    /// the connection only when that discovery round ends.
    var waitsForDiscoveryEnd = false
    /// The peripheral as the central sees it: the Device1 Connect was called on.
    let centralDevice: RemoteDevice
    /// The central as the peripheral sees it, by its public address.
    var peripheralDevice: RemoteDevice?
    /// The ATT MTU both ends agreed on.
    let mtu: UInt16
    var state = State.connecting
    /// Connect calls waiting for the outcome.
    var waiters: [CheckedContinuation<Result<Void, DBusError>, Never>] = []
    /// Fails the connection attempt when no connectable advertiser answers in time.
    var timeout: Task<Void, Never>?
    /// The ATT bearers notifications travel on, and the one the next takes.
    var bearers: [ATTBearer] = []
    var nextBearer = 0
    /// Disconnect calls waiting for the link to drop.
    var disconnectWaiters: [CheckedContinuation<Void, Never>] = []

    init(id: UInt64, central: String, centralDevice: RemoteDevice, mtu: UInt16) {
        self.id = id
        self.central = central
        self.centralDevice = centralDevice
        self.mtu = mtu
    }

    /// The device that represents the other end on `adapter`'s side.
    func device(on adapter: String) -> RemoteDevice? {
        if adapter == central { return centralDevice }
        if adapter == peripheral { return peripheralDevice }
        return nil
    }

    /// The other end's adapter.
    func peer(of adapter: String) -> String? {
        if adapter == central { return peripheral }
        if adapter == peripheral { return central }
        return nil
    }

    /// True when `device` is one of the two ends' Device1 objects.
    func involves(_ device: RemoteDevice) -> Bool {
        centralDevice === device || peripheralDevice === device
    }

    /// The bearer for the next notification (round robin).
    func takeBearer() -> ATTBearer? {
        guard !bearers.isEmpty else { return nil }
        defer { nextBearer = (nextBearer + 1) % bearers.count }
        return bearers[nextBearer % bearers.count]
    }

    /// Answers every waiting Disconnect.
    func dropped() {
        let waiting = disconnectWaiters
        disconnectWaiters.removeAll()
        for waiter in waiting { waiter.resume() }
    }

    /// Answers every waiting Connect.
    func resolve(_ result: Result<Void, DBusError>) {
        let waiting = waiters
        waiters.removeAll()
        for waiter in waiting { waiter.resume(returning: result) }
    }
}
