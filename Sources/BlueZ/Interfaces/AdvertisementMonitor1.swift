import DBus

/// `or_patterns` advertisement monitors this process exports as
/// `org.bluez.AdvertisementMonitor1` objects, `root/monitor0`, `root/monitor1`
/// … below an `org.freedesktop.DBus.ObjectManager` at `root`: the application
/// that `AdvertisementMonitorManager1.registerMonitor(root, …)` registers.
///
/// The patterns are split over as many objects as needed, at most
/// `maximumPatterns` each. The kernel would take 16 per monitor (the VM rig's
/// probe, docs/e2e.md), but bluetoothd (src/adv_monitor.c, 5.66 to at least
/// 5.79) sizes its Add Adv Patterns Monitor command, 1 + 34 bytes a pattern,
/// in a uint8_t: from 8 patterns on the length wraps, the copy overruns its
/// heap and bluetoothd aborts ("free(): invalid next size", seen on the rig
/// with 16). bluetoothd releases a monitor it refuses. Each
/// object has `Type` "or_patterns" and `Patterns`; the optional RSSI
/// properties are left out (no RSSI thresholds: every matching advertisement
/// counts, whatever its strength). `Release`, `Activate`, `DeviceFound` and
/// `DeviceLost` are handed to `onEvent` with the object's path and the
/// caller's unique bus name, on the connection's task: anyone on the bus can
/// call them, so the owner decides whose word counts (bluetoothd's alone).
public final class AdvertisementMonitor1: Sendable {
    public static let interface = "org.bluez.AdvertisementMonitor1"
    /// The most patterns one monitor object gets: the most bluetoothd can pass
    /// on without overrunning its heap (above).
    public static let maximumPatterns = 7

    /// The application root, what `RegisterMonitor` is given.
    public let root: DBusObjectPath
    /// The monitor objects, in order.
    public let paths: [DBusObjectPath]
    public let patterns: [AdvertisementPattern]
    private let connection: DBusConnection
    private let objects: [DBusExportedObject]

    private init(
        root: DBusObjectPath, paths: [DBusObjectPath], patterns: [AdvertisementPattern], connection: DBusConnection,
        objects: [DBusExportedObject]
    ) {
        self.root = root
        self.paths = paths
        self.patterns = patterns
        self.connection = connection
        self.objects = objects
    }

    /// Exports the object manager at `root` and the monitor below it.
    /// - Throws: `DBusError.invalidArgs` when `patterns` is empty or holds one
    ///   BlueZ would refuse (`AdvertisementPattern.isValid`), or when something
    ///   is already exported there.
    public static func export(
        _ patterns: [AdvertisementPattern], root: DBusObjectPath, on connection: DBusConnection,
        onEvent: @escaping @Sendable (DBusObjectPath, AdvertisementMonitorEvent, _ sender: String?) -> Void
    ) async throws -> AdvertisementMonitor1 {
        guard !patterns.isEmpty, patterns.allSatisfy(\.isValid) else {
            throw DBusError(.invalidArgs, "an or_patterns monitor needs 1 or more patterns of 1…31 bytes within 31")
        }
        try await connection.addObjectManager(at: root)
        var objects: [DBusExportedObject] = []
        var paths: [DBusObjectPath] = []
        do {
            for start in stride(from: 0, to: patterns.count, by: maximumPatterns) {
                let path = try DBusObjectPath(
                    (root.rawValue == "/" ? "" : root.rawValue) + "/monitor\(start / maximumPatterns)")
                let group = Array(patterns[start..<min(start + maximumPatterns, patterns.count)])
                objects.append(try await connection.export(path, interfaces: [makeInterface(group, path, onEvent)]))
                paths.append(path)
            }
        } catch {
            for object in objects { await object.unexport() }
            try? await connection.removeObjectManager(at: root)
            throw error
        }
        return AdvertisementMonitor1(root: root, paths: paths, patterns: patterns, connection: connection, objects: objects)
    }

    private static func makeInterface(
        _ patterns: [AdvertisementPattern], _ path: DBusObjectPath,
        _ onEvent: @escaping @Sendable (DBusObjectPath, AdvertisementMonitorEvent, _ sender: String?) -> Void
    ) -> DBusInterface {
        @Sendable func device(_ call: DBusMessage) throws -> DBusObjectPath {
            guard case .objectPath(let device)? = call.body.first else {
                throw DBusError(.invalidArgs, "expected a device object path")
            }
            return device
        }
        let element = DBusType.structure([.byte, .byte, .array(.byte)])
        return DBusInterface(
            interface,
            methods: [
                DBusMethod("Release") { call in
                    onEvent(path, .released, call.sender)
                    return []
                },
                DBusMethod("Activate") { call in
                    onEvent(path, .activated, call.sender)
                    return []
                },
                DBusMethod("DeviceFound", inputs: "o", argumentNames: ["device"]) { call in
                    onEvent(path, .deviceFound(try device(call)), call.sender)
                    return []
                },
                DBusMethod("DeviceLost", inputs: "o", argumentNames: ["device"]) { call in
                    onEvent(path, .deviceLost(try device(call)), call.sender)
                    return []
                },
            ],
            properties: [
                DBusProperty("Type", AdvertisementMonitorManager1.orPatterns, changeSignal: .const),
                DBusProperty(
                    "Patterns", type: .array(element), value: .array(element: element, patterns.map(\.value)),
                    changeSignal: .const),
            ])
    }

    /// Removes the monitors and the object manager from the bus.
    public func unexport() async {
        for object in objects { await object.unexport() }
        try? await connection.removeObjectManager(at: root)
    }
}
