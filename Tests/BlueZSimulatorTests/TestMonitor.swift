import DBus
import Synchronization

/// A monitor application served by a test peer, written from
/// org.bluez.AdvertisementMonitor(5): an object manager at `root` and one
/// `org.bluez.AdvertisementMonitor1` object at `root/m0` with the given
/// properties. It records the calls bluetoothd makes, as "Activate",
/// "Release", "DeviceFound <path>", "DeviceLost <path>".
final class TestMonitor: Sendable {
    static let interface = "org.bluez.AdvertisementMonitor1"

    let connection: DBusConnection
    let root: DBusObjectPath
    let path: DBusObjectPath
    private final class Log: Sendable {
        let lines = Mutex<[String]>([])
    }
    private let log = Log()

    var calls: [String] { log.lines.withLock { $0 } }

    init(on connection: DBusConnection, root: DBusObjectPath, properties: [String: DBusValue]) async throws {
        self.connection = connection
        self.root = root
        path = try root.appending("m0")
        try await connection.addObjectManager(at: root)
        let log = self.log
        @Sendable func record(_ call: DBusMessage) -> [DBusValue] {
            var line = call.member ?? "?"
            if case .objectPath(let device)? = call.body.first { line += " \(device)" }
            log.lines.withLock { $0.append(line) }
            return []
        }
        _ = try await connection.export(
            path,
            interfaces: [
                DBusInterface(
                    Self.interface,
                    methods: [
                        DBusMethod("Release") { record($0) }, DBusMethod("Activate") { record($0) },
                        DBusMethod("DeviceFound", inputs: "o") { record($0) },
                        DBusMethod("DeviceLost", inputs: "o") { record($0) },
                    ],
                    properties: properties.sorted { $0.key < $1.key }.map {
                        DBusProperty($0.key, type: $0.value.type, value: $0.value)
                    })
            ])
    }

    /// `Type` "or_patterns" with `Patterns` of (start, AD type, content).
    static func orPatterns(_ patterns: [(UInt8, UInt8, [UInt8])]) -> [String: DBusValue] {
        let element = DBusType.structure([.byte, .byte, .array(.byte)])
        return [
            "Type": .string("or_patterns"),
            "Patterns": .array(
                element: element, patterns.map { .structure([.byte($0.0), .byte($0.1), .bytes($0.2)]) }),
        ]
    }

    /// Manufacturer data of company 0xFFFF whose first byte is 0x18 … 0x1E: 7 patterns, the most
    /// bluetoothd takes in one monitor without overrunning its heap.
    static let handoff = orPatterns((8..<15).map { (0, 0xFF, [0xFF, 0xFF, 0x10 | UInt8($0)]) })
}
