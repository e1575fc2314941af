import DBus

/// `org.bluez.AdvertisementMonitorManager1` (same path as the adapter):
/// registers an application whose object tree holds `AdvertisementMonitor1`
/// objects. bluetoothd marks it experimental: 5.66 offers it only when started
/// with `-E` (docs/e2e.md).
///
/// At `RegisterMonitor` bluetoothd reads the application's tree
/// (`GetManagedObjects`) and then calls `Activate` on each monitor it takes and
/// `Release` on each it refuses; those calls come without waiting for a reply.
public struct AdvertisementMonitorManager1: Sendable {
    public static let interface = "org.bluez.AdvertisementMonitorManager1"
    /// The monitor type of pattern monitors, in `SupportedMonitorTypes`.
    public static let orPatterns = "or_patterns"
    /// The feature that says patterns go to the controller, in `SupportedFeatures`.
    public static let controllerPatterns = "controller-patterns"

    public let path: DBusObjectPath
    public var supportedMonitorTypes: [String]
    public var supportedFeatures: [String]

    /// Pattern monitors are offered.
    public var offersOrPatterns: Bool { supportedMonitorTypes.contains(Self.orPatterns) }
    /// The controller filters by the patterns itself (offload).
    public var controllerFilters: Bool { supportedFeatures.contains(Self.controllerPatterns) }

    public init(path: DBusObjectPath, properties: [String: DBusValue]) throws(DBusDecodingError) {
        self.path = path
        supportedMonitorTypes = try properties.optional("SupportedMonitorTypes") ?? []
        supportedFeatures = try properties.optional("SupportedFeatures") ?? []
    }

    /// `RegisterMonitor(object application)`.
    /// - Throws: `DBusError` such as `org.bluez.Error.AlreadyExists`,
    ///   `InvalidArguments` or `Failed`.
    public static func registerMonitor(
        _ application: DBusObjectPath, adapter: DBusObjectPath, on connection: DBusConnection
    ) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: adapter, interface: interface, member: "RegisterMonitor",
            [.objectPath(application)])
    }

    /// `UnregisterMonitor(object application)`; bluetoothd calls `Release` on the monitors.
    /// - Throws: `DBusError` such as `org.bluez.Error.DoesNotExist`.
    public static func unregisterMonitor(
        _ application: DBusObjectPath, adapter: DBusObjectPath, on connection: DBusConnection
    ) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: adapter, interface: interface, member: "UnregisterMonitor",
            [.objectPath(application)])
    }
}

extension BlueZObjectManager {
    /// The adapter's `AdvertisementMonitorManager1` (same path), when bluetoothd offers one.
    public func advertisementMonitorManager(of adapter: DBusObjectPath) -> AdvertisementMonitorManager1? {
        properties(of: adapter, interface: AdvertisementMonitorManager1.interface)
            .flatMap { try? AdvertisementMonitorManager1(path: adapter, properties: $0) }
    }
}
