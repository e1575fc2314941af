import DBus
import Synchronization

/// An `org.bluez.LEAdvertisement1` object served by a test peer on its own
/// connection; it counts Release calls and can change its properties live.
final class TestAdvertisement: Sendable {
    static let interface = "org.bluez.LEAdvertisement1"

    let connection: DBusConnection
    let path: DBusObjectPath
    let object: DBusExportedObject
    private let releases: ReleaseCounter

    /// How often bluetoothd called Release.
    var released: Int { releases.value }

    /// Exports the object with `properties` (each declared with its value's type).
    init(on connection: DBusConnection, path: DBusObjectPath, properties: [String: DBusValue]) async throws {
        self.connection = connection
        self.path = path
        let releases = ReleaseCounter()
        self.releases = releases
        object = try await connection.export(
            path,
            interfaces: [
                DBusInterface(
                    Self.interface,
                    methods: [
                        DBusMethod("Release") { _ in
                            releases.increment()
                            return []
                        }
                    ],
                    properties: properties.sorted { $0.key < $1.key }.map {
                        DBusProperty($0.key, type: $0.value.type, value: $0.value)
                    })
            ])
    }

    /// ManufacturerData `{company: bytes}` as a{qv}.
    static func manufacturerData(_ company: UInt16, _ bytes: [UInt8]) -> DBusValue {
        .dictionary(key: .uint16, value: .variant, [(.uint16(company), .variant(.bytes(bytes)))])
    }

    /// The usual test advertisement: `type`, ManufacturerData under `company`, maybe Discoverable.
    static func properties(
        type: String = "peripheral", company: UInt16 = 0xFFFF, data: [UInt8] = [1, 2, 3], discoverable: Bool? = nil
    ) -> [String: DBusValue] {
        var properties: [String: DBusValue] = [
            "Type": .string(type), "ManufacturerData": manufacturerData(company, data),
        ]
        if let discoverable { properties["Discoverable"] = .boolean(discoverable) }
        return properties
    }

    /// Changes ManufacturerData and emits PropertiesChanged, as a live update.
    func setManufacturerData(_ company: UInt16, _ bytes: [UInt8]) async throws {
        try await object.setProperty("ManufacturerData", of: Self.interface, to: Self.manufacturerData(company, bytes))
    }
}
