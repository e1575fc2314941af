import DBus
import Synchronization

/// A GATT application this process exports and registers with
/// `GattManager1.RegisterApplication`: the local (server) side of BlueZ's GATT
/// API.
///
/// The object tree follows BlueZ's org.bluez.GattManager documentation: an
/// `org.freedesktop.DBus.ObjectManager` at `root`, each service at
/// `root/serviceN` (`org.bluez.GattService1`: UUID, Primary) and each
/// characteristic at `root/serviceN/charM` (`org.bluez.GattCharacteristic1`:
/// UUID, Service, Flags, and Value and Notifying when it can notify, with
/// ReadValue, WriteValue, StartNotify and StopNotify served by the handlers).
///
///     let app = try await GattApplication.export(
///         [LocalGattService(uuid: serviceUUID, characteristics: [
///             LocalGattCharacteristic(uuid: requestUUID, flags: [.write]) { value, options in … },
///             LocalGattCharacteristic(uuid: responseUUID, flags: [.notify]),
///         ])],
///         at: "/org/handoff/gatt", on: connection)
///     try await app.register(on: "/org/bluez/hci0")
///     try await app.characteristic(responseUUID)?.notify(chunk)
///
/// bluetoothd reads the tree (GetManagedObjects) before RegisterApplication
/// replies; the DBus module answers such calls while the registration waits.
/// Once registered, the tree must stay as it is: bluetoothd drops a service
/// whose object disappears, and drops the whole application when this
/// connection leaves the bus.
public final class GattApplication: Sendable {
    /// Where the object manager lives.
    public let root: DBusObjectPath
    public let connection: DBusConnection
    /// The exported characteristics, in definition order.
    public let characteristics: [Characteristic]
    private let services: [DBusExportedObject]
    private let state = Mutex<(registered: [DBusObjectPath], unexported: Bool)>(([], false))

    private init(
        root: DBusObjectPath, connection: DBusConnection, services: [DBusExportedObject],
        characteristics: [Characteristic]
    ) {
        self.root = root
        self.connection = connection
        self.services = services
        self.characteristics = characteristics
    }

    /// Exports `services` below `root` with an object manager at `root`.
    /// - Throws: `DBusError.invalidArgs` for a definition bluetoothd would refuse
    ///   (no service, an empty UUID, no flags or an unknown flag), or when
    ///   something is already exported there.
    public static func export(
        _ services: [LocalGattService], at root: DBusObjectPath, on connection: DBusConnection
    ) async throws -> GattApplication {
        try validate(services)
        var serviceObjects: [DBusExportedObject] = []
        var characteristics: [Characteristic] = []
        try await connection.addObjectManager(at: root)
        do {
            for (serviceIndex, service) in services.enumerated() {
                let servicePath = try root.appending("service\(serviceIndex)")
                serviceObjects.append(
                    try await connection.export(
                        servicePath,
                        interfaces: [
                            DBusInterface(
                                GattService1.interface,
                                properties: [
                                    DBusProperty("UUID", service.uuid, changeSignal: .const),
                                    DBusProperty("Primary", service.primary, changeSignal: .const),
                                ])
                        ]))
                for (index, definition) in service.characteristics.enumerated() {
                    let characteristic = Characteristic(
                        path: try servicePath.appending("char\(index)"), definition: definition)
                    try await characteristic.export(service: servicePath, on: connection)
                    characteristics.append(characteristic)
                }
            }
        } catch {
            for characteristic in characteristics { await characteristic.unexport() }
            for object in serviceObjects { await object.unexport() }
            try? await connection.removeObjectManager(at: root)
            throw error
        }
        return GattApplication(
            root: root, connection: connection, services: serviceObjects, characteristics: characteristics)
    }

    private static func validate(_ services: [LocalGattService]) throws(DBusError) {
        guard !services.isEmpty else { throw DBusError(.invalidArgs, "a GATT application needs at least one service") }
        for service in services {
            guard !service.uuid.isEmpty else { throw DBusError(.invalidArgs, "a GATT service needs a UUID") }
            for characteristic in service.characteristics {
                guard !characteristic.uuid.isEmpty else {
                    throw DBusError(.invalidArgs, "a characteristic of service \(service.uuid) has no UUID")
                }
                guard !characteristic.flags.isEmpty else {
                    throw DBusError(.invalidArgs, "characteristic \(characteristic.uuid) has no flags")
                }
                if let unknown = characteristic.flags.first(where: { !Characteristic.knownFlags.contains($0) }) {
                    throw DBusError(.invalidArgs, "characteristic \(characteristic.uuid) has unknown flag '\(unknown)'")
                }
            }
        }
    }

    /// The characteristic with `uuid` (compared without regard to case).
    public func characteristic(_ uuid: String) -> Characteristic? {
        characteristics.first { $0.uuid.lowercased() == uuid.lowercased() }
    }

    /// The adapters this application is registered on.
    public var registeredAdapters: [DBusObjectPath] { state.withLock { $0.registered } }

    /// `GattManager1.RegisterApplication` on `adapter`.
    /// - Throws: `DBusError`: `org.bluez.Error.AlreadyExists`, `InvalidArguments`,
    ///   or `Failed` when bluetoothd refuses the tree.
    public func register(on adapter: DBusObjectPath, options: [String: DBusValue] = [:]) async throws {
        guard !state.withLock({ $0.unexported }) else {
            throw DBusError(.failed, "the GATT application at \(root) was taken off the bus")
        }
        try await GattManager1.registerApplication(root, adapter: adapter, on: connection, options: options)
        state.withLock { if !$0.registered.contains(adapter) { $0.registered.append(adapter) } }
    }

    /// `GattManager1.UnregisterApplication` on `adapter`.
    /// - Throws: `DBusError`: `org.bluez.Error.DoesNotExist` when it was not registered there.
    public func unregister(from adapter: DBusObjectPath) async throws {
        state.withLock { $0.registered.removeAll { $0 == adapter } }
        try await GattManager1.unregisterApplication(root, adapter: adapter, on: connection)
    }

    /// Unregisters from every adapter (ignoring failures: bluetoothd may be
    /// gone), then takes the objects and the object manager off the bus.
    public func unexport() async {
        let adapters = state.withLock { state -> [DBusObjectPath] in
            guard !state.unexported else { return [] }
            state.unexported = true
            defer { state.registered.removeAll() }
            return state.registered
        }
        for adapter in adapters {
            try? await GattManager1.unregisterApplication(root, adapter: adapter, on: connection)
        }
        for characteristic in characteristics { await characteristic.unexport() }
        for service in services { await service.unexport() }
        try? await connection.removeObjectManager(at: root)
    }
}
