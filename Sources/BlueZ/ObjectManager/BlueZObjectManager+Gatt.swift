import DBus
import Synchronization

/// Finding a connected device's GATT services and characteristics in the
/// mirrored tree, and waiting until bluetoothd has resolved them.
extension BlueZObjectManager {
    /// The device at `path`, if the tree has it.
    public func device(_ path: DBusObjectPath) -> Device1? {
        properties(of: path, interface: Device1.interface).flatMap { try? Device1(path: path, properties: $0) }
    }

    /// The GATT services bluetoothd exported for `device`, sorted by path.
    public func gattServices(of device: DBusObjectPath) -> [GattService1] {
        objects(implementing: GattService1.interface).compactMap { entry in
            guard entry.path.isDescendant(of: device) else { return nil }
            return try? GattService1(path: entry.path, properties: entry.properties)
        }
    }

    /// The first service of `device` with `uuid` (compared without regard to case).
    public func gattService(uuid: String, of device: DBusObjectPath) -> GattService1? {
        let wanted = uuid.lowercased()
        return gattServices(of: device).first { $0.uuid == wanted }
    }

    /// The characteristics of `service`, sorted by path.
    public func gattCharacteristics(of service: DBusObjectPath) -> [GattCharacteristic1] {
        objects(implementing: GattCharacteristic1.interface).compactMap { entry in
            guard entry.path.isDescendant(of: service),
                let characteristic = try? GattCharacteristic1(path: entry.path, properties: entry.properties),
                characteristic.service == service
            else { return nil }
            return characteristic
        }
    }

    /// The characteristic of `service` with `uuid` (compared without regard to case).
    public func gattCharacteristic(uuid: String, in service: DBusObjectPath) -> GattCharacteristic1? {
        let wanted = uuid.lowercased()
        return gattCharacteristics(of: service).first { $0.uuid == wanted }
    }

    /// Returns once `device` has `ServicesResolved` true (at once if it already
    /// has), so that its GATT objects are in the tree.
    ///
    /// It follows the tree's changes; it never polls.
    /// - Throws: `DBusError` `org.bluez.Error.NotConnected` when the device
    ///   disconnects or disappears (or bluetoothd leaves) first,
    ///   `org.freedesktop.DBus.Error.Timeout` after `timeout`, `…Cancelled` when
    ///   the task is cancelled.
    public func waitForServicesResolved(_ device: DBusObjectPath, timeout: Duration = .seconds(30)) async throws {
        let waiter = OneShot<Void>()
        let token = observe { event in
            switch event {
            case .propertiesChanged(let path, let interface, let changed, _, let current)
            where path == device && interface == Device1.interface:
                if current["ServicesResolved"] == .boolean(true) {
                    waiter.finish(.success(()))
                } else if changed["Connected"] == .boolean(false) {
                    waiter.finish(.failure(DBusError(.bluezNotConnected, "\(device) disconnected")))
                }
            case .interfacesRemoved(let path, let names) where path == device && names.contains(Device1.interface):
                waiter.finish(.failure(DBusError(.bluezNotConnected, "\(device) went away")))
            case .serviceVanished:
                waiter.finish(.failure(DBusError(.bluezNotConnected, "bluetoothd left the bus")))
            default:
                break
            }
        }
        defer { token.cancel() }
        if properties(of: device, interface: Device1.interface)?["ServicesResolved"] == .boolean(true) {
            waiter.finish(.success(()))
        }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            waiter.finish(.failure(DBusError(.timeout, "services of \(device) not resolved within \(timeout)")))
        }
        defer { timer.cancel() }
        try await withTaskCancellationHandler {
            try await waiter.value()
        } onCancel: {
            waiter.finish(.failure(DBusError(.cancelled, "waiting for services was cancelled")))
        }
    }
}

extension BlueZObjectManager {
    /// Returns what `find` finds in the tree, as soon as it finds something:
    /// at once, or after a change of the tree; nil when `timeout` passes first
    /// or the task is cancelled. It never polls.
    ///
    /// For the GATT objects of a device that shows `ServicesResolved`:
    /// bluetoothd flushes each object's signals separately, so the device's
    /// `PropertiesChanged` can come before the `InterfacesAdded` of services it
    /// exported just before (seen on the VM rig).
    public func first<T: Sendable>(within timeout: Duration, _ find: @escaping @Sendable () -> T?) async -> T? {
        if let found = find() { return found }
        let waiter = OneShot<T?>()
        let token = observe { _ in
            if let found = find() { waiter.finish(.success(found)) }
        }
        defer { token.cancel() }
        if let found = find() { waiter.finish(.success(found)) }
        let timer = Task {
            try? await Task.sleep(for: timeout)
            waiter.finish(.success(nil))
        }
        defer { timer.cancel() }
        return await withTaskCancellationHandler {
            (try? await waiter.value()) ?? nil
        } onCancel: {
            waiter.finish(.success(nil))
        }
    }
}

/// A result that is set once and awaited once, from any thread.
private final class OneShot<Value: Sendable>: Sendable {
    private let state = Mutex<(result: Result<Value, DBusError>?, waiter: CheckedContinuation<Value, Error>?)>((nil, nil))

    /// Sets the result, unless one was set before; wakes the waiter.
    func finish(_ result: Result<Value, DBusError>) {
        let waiter = state.withLock { state -> CheckedContinuation<Value, Error>? in
            guard state.result == nil else { return nil }
            state.result = result
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(with: result.mapError { $0 as Error })
    }

    func value() async throws -> Value {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, Error>) in
            let ready = state.withLock { state -> Result<Value, DBusError>? in
                if state.result == nil { state.waiter = continuation }
                return state.result
            }
            if let ready { continuation.resume(with: ready.mapError { $0 as Error }) }
        }
    }
}
