/// An object this connection exports, returned by `DBusConnection.export`.
///
/// Keep it to change properties, emit signals, or take the object off the bus.
/// Dropping it does not unexport the object.
public final class DBusExportedObject: Sendable {
    /// Where the object lives.
    public let path: DBusObjectPath
    private let connection: DBusConnection

    init(path: DBusObjectPath, connection: DBusConnection) {
        self.path = path
        self.connection = connection
    }

    /// Changes one property and emits `PropertiesChanged` if the value changed.
    /// - Throws: `DBusError` for an unknown property or a value of the wrong type.
    public func setProperty(_ name: String, of interface: String, to value: DBusValue) async throws {
        try await setProperties(of: interface, [name: value])
    }

    /// Changes several properties of one interface and emits a single `PropertiesChanged`
    /// (none with `announce: false`: peers see the new values when they next read them).
    public func setProperties(of interface: String, _ values: [String: DBusValue], announce: Bool = true) async throws {
        let path = self.path
        try await connection.onLoop { core in
            try core.objects.setProperties(path, interface: interface, values, announce: announce, core: core)
        }
    }

    /// The current value of a property.
    public func property(_ name: String, of interface: String) async throws -> DBusValue? {
        let path = self.path
        return try await connection.onLoop { core in core.objects.property(path, interface: interface, name: name) }
    }

    /// Emits a signal from this object.
    public func emitSignal(interface: String, member: String, _ body: [DBusValue] = []) throws {
        try connection.emitSignal(path: path, interface: interface, member: member, body)
    }

    /// Takes the object off the bus (emitting `InterfacesRemoved` under an object manager).
    public func unexport() async {
        let path = self.path
        _ = try? await connection.onLoop { core in core.objects.unexport(path, core: core) }
    }
}

extension DBusConnection {
    /// Exports an object at `path` implementing `interfaces`.
    ///
    /// Under an object manager this emits `InterfacesAdded`. The connection
    /// answers `Properties`, `Introspectable` and `Peer` calls for it.
    /// - Throws: `DBusError` when something is already exported there or an
    ///   interface description is invalid.
    public func export(_ path: DBusObjectPath, interfaces: [DBusInterface]) async throws -> DBusExportedObject {
        try await onLoop { core in try core.objects.export(path, interfaces: interfaces, core: core) }
        return DBusExportedObject(path: path, connection: self)
    }

    /// Implements `org.freedesktop.DBus.ObjectManager` at `path`: `GetManagedObjects`
    /// lists every exported object below it, and exporting or unexporting one
    /// emits `InterfacesAdded` or `InterfacesRemoved`.
    public func addObjectManager(at path: DBusObjectPath) async throws {
        try await onLoop { core in core.objects.addManager(path) }
    }

    /// Stops serving `org.freedesktop.DBus.ObjectManager` at `path`.
    public func removeObjectManager(at path: DBusObjectPath) async throws {
        try await onLoop { core in core.objects.removeManager(path) }
    }
}
