import DBus

/// One `GattManager1.RegisterApplication` on one adapter: the application's
/// services as bluetoothd put them into the adapter's local GATT database,
/// with their attribute handles.
///
/// Confined to its `BluetoothDaemon`.
final class RegisteredApplication {
    enum State { case pending, active }

    let id: UInt64
    /// The registering client's unique bus name.
    let owner: String
    /// The application root (its object manager).
    let path: DBusObjectPath
    let adapter: String
    var state = State.pending
    var services: [GattServiceRecord] = []
    /// Follows the application's signals (Value changes, InterfacesRemoved).
    var watch: Task<Void, Never>?

    init(id: UInt64, owner: String, path: DBusObjectPath, adapter: String) {
        self.id = id
        self.owner = owner
        self.path = path
        self.adapter = adapter
    }

    func characteristic(at path: DBusObjectPath) -> GattCharacteristicRecord? {
        for service in services {
            if let found = service.characteristics.first(where: { $0.path == path }) { return found }
        }
        return nil
    }
}

/// A service of a registered application, as placed in the database.
struct GattServiceRecord: Sendable {
    /// The application's object.
    let path: DBusObjectPath
    /// 128-bit, lowercase.
    let uuid: String
    let primary: Bool
    /// The Handle property, when the application asked for one (0: any).
    let requestedHandle: UInt16
    var characteristics: [GattCharacteristicRecord]
    /// Descriptors the application declared for this service (counted for handles only).
    var descriptorCount: Int
    /// The service declaration's handle, once placed.
    var handle: UInt16 = 0

    /// Attributes the service takes: its declaration, each characteristic's, each descriptor.
    var attributeCount: Int {
        1 + characteristics.reduce(0) { $0 + $1.flags.attributeCount } + descriptorCount
    }

    var endHandle: UInt16 { handle &+ UInt16(attributeCount - 1) }

    /// Places the service at `handle` and numbers its characteristics in order.
    mutating func place(at handle: UInt16) {
        self.handle = handle
        var next = handle &+ 1
        for index in characteristics.indices {
            characteristics[index].handle = next
            next &+= UInt16(characteristics[index].flags.attributeCount)
        }
    }
}

/// A characteristic of a registered application.
struct GattCharacteristicRecord: Sendable {
    let path: DBusObjectPath
    let uuid: String
    let flags: GattFlags
    /// The declaration's handle; the value follows it, then the CCC descriptor if any.
    var handle: UInt16 = 0

    var valueHandle: UInt16 { handle &+ 1 }
    var cccHandle: UInt16? { flags.canNotify ? handle &+ 2 : nil }
}
