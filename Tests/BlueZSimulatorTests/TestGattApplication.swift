import DBus
import Synchronization

/// A GATT application served by a test peer on its own connection, written
/// with the DBus module only (the simulator's tests do not use the BlueZ
/// module): an object manager at `root`, `root/service0` and its
/// characteristics `root/service0/charN`. It records every call bluetoothd
/// makes, answers reads with a set value, and refuses writes with a set error.
final class TestGattApplication: Sendable {
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let serviceUUID = "12345678-1234-5678-1234-56789abc0000"

    struct Characteristic: Sendable {
        var uuid: String
        var flags: [String]
    }

    /// One call from bluetoothd.
    struct Call: Sendable, Equatable {
        var member: String
        var path: DBusObjectPath
        var value: [UInt8]?
        var options: [String: DBusValue]
        var noReplyExpected: Bool
    }

    let connection: DBusConnection
    let root: DBusObjectPath
    let characteristicPaths: [DBusObjectPath]
    private let objects: [DBusExportedObject]
    private let state = State()

    /// What the handlers share. Any thread.
    private final class State: Sendable {
        let log = Mutex<[Call]>([])
        let readValue = Mutex<[UInt8]>([])
        let writeError = Mutex<DBusError?>(nil)
    }

    /// Exports the tree. `serviceProperties` replaces the service's properties (for bad trees).
    init(
        on connection: DBusConnection, root: DBusObjectPath = "/test/app", characteristics: [Characteristic],
        serviceProperties: [String: DBusValue]? = nil, objectManager: Bool = true
    ) async throws {
        self.connection = connection
        self.root = root
        if objectManager { try await connection.addObjectManager(at: root) }
        let servicePath = try root.appending("service0")
        let service = serviceProperties ?? ["UUID": .string(Self.serviceUUID), "Primary": .boolean(true)]
        var objects = [
            try await connection.export(
                servicePath,
                interfaces: [
                    DBusInterface(
                        Self.serviceInterface,
                        properties: service.sorted { $0.key < $1.key }.map {
                            DBusProperty($0.key, type: $0.value.type, value: $0.value)
                        })
                ])
        ]
        var paths: [DBusObjectPath] = []
        for (index, characteristic) in characteristics.enumerated() {
            let path = try servicePath.appending("char\(index)")
            paths.append(path)
            objects.append(
                try await connection.export(
                    path,
                    interfaces: [
                        Self.makeCharacteristicInterface(
                            path: path, service: servicePath, characteristic, state: state)
                    ]))
        }
        self.objects = objects
        characteristicPaths = paths
    }

    private static func makeCharacteristicInterface(
        path: DBusObjectPath, service: DBusObjectPath, _ characteristic: Characteristic, state: State
    ) -> DBusInterface {
        @Sendable func record(_ call: DBusMessage, value: [UInt8]?, options: DBusValue?) {
            state.log.withLock {
                $0.append(
                    Call(
                        member: call.member ?? "", path: path, value: value, options: options?.vardict ?? [:],
                        noReplyExpected: call.noReplyExpected))
            }
        }
        return DBusInterface(
            characteristicInterface,
            methods: [
                DBusMethod("ReadValue", inputs: "a{sv}", outputs: "ay") { call in
                    record(call, value: nil, options: call.body[0])
                    let offset = Int(call.body[0].vardict?["offset"]?.integer ?? 0)
                    let value = state.readValue.withLock { $0 }
                    return [.bytes(value.dropFirst(offset))]
                },
                DBusMethod("WriteValue", inputs: "aya{sv}") { call in
                    record(call, value: call.body[0].bytes, options: call.body[1])
                    if let error = state.writeError.withLock({ $0 }) { throw error }
                    return []
                },
                DBusMethod("StartNotify") { call in
                    record(call, value: nil, options: nil)
                    return []
                },
                DBusMethod("StopNotify") { call in
                    record(call, value: nil, options: nil)
                    return []
                },
            ],
            properties: [
                DBusProperty("UUID", characteristic.uuid),
                DBusProperty("Service", service),
                DBusProperty("Flags", characteristic.flags),
                DBusProperty("Value", type: .array(.byte), value: .bytes([]), changeSignal: .false),
            ])
    }

    /// Every call so far, in arrival order.
    var calls: [Call] { state.log.withLock { $0 } }

    func calls(_ member: String) -> [Call] { calls.filter { $0.member == member } }

    /// What ReadValue returns from now on.
    func setReadValue(_ value: [UInt8]) { state.readValue.withLock { $0 = value } }

    /// The error WriteValue throws from now on (nil: succeed).
    func setWriteError(_ error: DBusError?) { state.writeError.withLock { $0 = error } }

    /// Emits PropertiesChanged for `Value`: bluetoothd turns each into a notification.
    func notify(_ index: Int, _ value: [UInt8]) throws {
        try connection.emitSignal(
            path: characteristicPaths[index], interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            [.string(Self.characteristicInterface), .vardict(["Value": .bytes(value)]), .strings([])])
    }

    /// Takes a characteristic's service off the bus (InterfacesRemoved under the object manager).
    func removeService() async {
        await objects[0].unexport()
    }
}
