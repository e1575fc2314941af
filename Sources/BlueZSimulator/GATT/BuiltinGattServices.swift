/// The GATT services bluetoothd itself puts in every adapter's database, as
/// the rig showed them on 5.66: GAP (0x1800, handles 0x0001–0x0007, not
/// exported to remote clients), GATT (0x1801, 0x0008–0x0011) and Device
/// Information (0x180a, 0x0012–0x0014). Applications' services come after.
enum BuiltinGattServices {
    struct Characteristic: Sendable {
        let uuid: String
        /// The declaration handle (the remote object is named after it).
        let handle: UInt16
        let flags: [String]
        let value: [UInt8]
    }

    struct Service: Sendable {
        let uuid: String
        let handle: UInt16
        let characteristics: [Characteristic]
    }

    static func uuid16(_ value: String) -> String { "0000\(value)-0000-1000-8000-00805f9b34fb" }

    /// The services a remote client sees (GAP is claimed by bluetoothd's own plugin).
    static let exported: [Service] = [
        Service(
            uuid: uuid16("1801"), handle: 0x0008,
            characteristics: [
                // Service Changed (with its CCC descriptor at 0x000b).
                Characteristic(uuid: uuid16("2a05"), handle: 0x0009, flags: ["indicate"], value: []),
                // Client Supported Features.
                Characteristic(uuid: uuid16("2b29"), handle: 0x000c, flags: ["read", "write"], value: [0x00]),
                // Database Hash.
                Characteristic(uuid: uuid16("2b2a"), handle: 0x000e, flags: ["read"], value: Array(repeating: 0, count: 16)),
                // Server Supported Features (EATT).
                Characteristic(uuid: uuid16("2b3a"), handle: 0x0010, flags: ["read"], value: [0x01]),
            ]),
        Service(
            uuid: uuid16("180a"), handle: 0x0012,
            characteristics: [
                // PnP ID: USB vendor 0x1d6b (Linux Foundation), product 0x0246, version 0x0542, as Modalias.
                Characteristic(
                    uuid: uuid16("2a50"), handle: 0x0013, flags: ["read"],
                    value: [0x02, 0x6B, 0x1D, 0x46, 0x02, 0x42, 0x05])
            ]),
    ]

    /// The primary service UUIDs bluetoothd adds to a connected device's `UUIDs`.
    static let deviceUUIDs = [uuid16("1800"), uuid16("1801"), uuid16("180a")]

    /// The first handle applications' services may take.
    static let firstFreeHandle: UInt16 = 0x0015
}
