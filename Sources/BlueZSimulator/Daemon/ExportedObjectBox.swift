import DBus
import Synchronization

/// Holds an exported object once the `BusWriter` has exported it, so later
/// queued operations can reach it. Any thread.
final class ExportedObjectBox: Sendable {
    private let storage = Mutex<DBusExportedObject?>(nil)

    var object: DBusExportedObject? {
        get { storage.withLock { $0 } }
        set { storage.withLock { $0 = newValue } }
    }

    /// Exports `interfaces` at `path` on `connection` and keeps the object.
    func export(_ path: DBusObjectPath, interfaces: [DBusInterface], on connection: DBusConnection, log: SimulatorLog)
        async
    {
        do {
            object = try await connection.export(path, interfaces: interfaces)
        } catch {
            log.error("cannot export \(path): \(error)")
        }
    }

    /// Stores property values (emitting what their `changeSignal` says).
    func set(_ interface: String, _ values: [String: DBusValue], log: SimulatorLog) async {
        guard let object, !values.isEmpty else { return }
        do { try await object.setProperties(of: interface, values) } catch {
            log.error("cannot set \(values.keys.sorted()) on \(object.path): \(error)")
        }
    }

    /// Takes the object off the bus (InterfacesRemoved).
    func unexport() async {
        guard let object = storage.withLock({ object in defer { object = nil }; return object }) else { return }
        await object.unexport()
    }
}
