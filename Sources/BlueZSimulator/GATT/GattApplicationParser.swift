import DBus

/// Reads an application's `GetManagedObjects` reply as bluetoothd 5.66 does
/// (`client_ready_cb` and `database_add_app` in src/gatt-database.c), with the
/// same three refusals, all `org.bluez.Error.Failed`:
///
/// - "No object received": the call failed, or listed no object;
/// - "No valid service object found": no `GattService1`, or a characteristic
///   (descriptor) whose `Service` (`Characteristic`) is not one of the
///   application's, or whose `Flags` are missing, empty or unknown;
/// - "Failed to create entry in database": a service or characteristic without
///   a valid `UUID` (or with the GAP or GATT service UUID, which bluetoothd
///   keeps for itself), a service without a boolean `Primary`, a mistyped
///   `Handle` or `Includes`, or no room in the database.
enum GattApplicationParser {
    static let serviceInterface = "org.bluez.GattService1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let descriptorInterface = "org.bluez.GattDescriptor1"
    static let reservedUUIDs: Set<String> = [
        "00001800-0000-1000-8000-00805f9b34fb", "00001801-0000-1000-8000-00805f9b34fb",
    ]

    enum Problem: Error, Equatable {
        case noObject
        case noValidService(String)
        case databaseEntry(String)

        var error: DBusError {
            switch self {
            case .noObject: BlueZError.failed("No object received")
            case .noValidService: BlueZError.failed("No valid service object found")
            case .databaseEntry: BlueZError.failed("Failed to create entry in database")
            }
        }

        var reason: String {
            switch self {
            case .noObject: "no object received"
            case .noValidService(let why), .databaseEntry(let why): why
            }
        }
    }

    typealias Objects = [(path: DBusObjectPath, interfaces: [(name: String, properties: [String: DBusValue])])]

    /// Splits a GetManagedObjects reply body into objects, keeping the wire order.
    static func objects(from reply: DBusMessage) -> Objects? {
        guard reply.body.count == 1, let entries = reply.body[0].dictionaryEntries else { return nil }
        var out: Objects = []
        for (key, value) in entries {
            guard case .objectPath(let path) = key, let interfaces = value.dictionaryEntries else { return nil }
            var list: [(name: String, properties: [String: DBusValue])] = []
            for (name, properties) in interfaces {
                guard case .string(let interface) = name, let map = properties.vardict else { return nil }
                list.append((interface, map))
            }
            out.append((path, list))
        }
        return out
    }

    /// The services in bluetoothd's order, with their characteristics; handles not yet placed.
    static func parse(_ objects: Objects) throws(Problem) -> [GattServiceRecord] {
        guard objects.contains(where: { !$0.interfaces.isEmpty }) else { throw .noObject }
        let proxies = objects.flatMap { object in object.interfaces.map { (path: object.path, interface: $0) } }

        // register_service, register_characteristic, register_descriptor, in that order.
        var servicePaths: [DBusObjectPath] = []
        var serviceProperties: [DBusObjectPath: [String: DBusValue]] = [:]
        for proxy in proxies where proxy.interface.name == serviceInterface {
            servicePaths.append(proxy.path)
            serviceProperties[proxy.path] = proxy.interface.properties
        }
        var characteristics: [DBusObjectPath: [(path: DBusObjectPath, properties: [String: DBusValue], flags: GattFlags)]] =
            [:]
        var characteristicService: [DBusObjectPath: DBusObjectPath] = [:]
        for proxy in proxies where proxy.interface.name == characteristicInterface {
            let properties = proxy.interface.properties
            guard case .objectPath(let service)? = properties["Service"], serviceProperties[service] != nil else {
                throw .noValidService("characteristic \(proxy.path) does not name one of the application's services")
            }
            guard let flags = parseFlags(properties["Flags"]) else {
                throw .noValidService("characteristic \(proxy.path) has missing, empty or unknown Flags")
            }
            characteristics[service, default: []].append((proxy.path, properties, flags))
            characteristicService[proxy.path] = service
        }
        var descriptors: [DBusObjectPath: Int] = [:]
        for proxy in proxies where proxy.interface.name == descriptorInterface {
            let properties = proxy.interface.properties
            guard case .objectPath(let characteristic)? = properties["Characteristic"],
                let service = characteristicService[characteristic]
            else {
                throw .noValidService("descriptor \(proxy.path) does not name one of the application's characteristics")
            }
            guard let names = properties["Flags"]?.arrayElements?.compactMap(\.string), !names.isEmpty,
                names.allSatisfy(descriptorFlags.contains)
            else { throw .noValidService("descriptor \(proxy.path) has missing, empty or unknown Flags") }
            descriptors[service, default: 0] += 1
        }
        guard !servicePaths.isEmpty else { throw .noValidService("no org.bluez.GattService1 object") }

        // database_add_app: UUID, Primary, Includes, Handle; then each characteristic's UUID.
        var services: [GattServiceRecord] = []
        for path in servicePaths {
            let properties = serviceProperties[path] ?? [:]
            let uuid = try parseUUID(properties["UUID"], of: path)
            guard case .boolean(let primary)? = properties["Primary"] else {
                throw .databaseEntry("service \(path) has no boolean Primary")
            }
            if let includes = properties["Includes"], includes.type != .array(.objectPath) {
                throw .databaseEntry("service \(path) has Includes of type '\(includes.type.signature)'")
            }
            let handle = try parseHandle(properties["Handle"], of: path)
            var records: [GattCharacteristicRecord] = []
            for entry in characteristics[path] ?? [] {
                _ = try parseHandle(entry.properties["Handle"], of: entry.path)
                records.append(
                    GattCharacteristicRecord(
                        path: entry.path, uuid: try parseUUID(entry.properties["UUID"], of: entry.path),
                        flags: entry.flags))
            }
            services.append(
                GattServiceRecord(
                    path: path, uuid: uuid, primary: primary, requestedHandle: handle, characteristics: records,
                    descriptorCount: descriptors[path] ?? 0))
        }
        return services
    }

    static let descriptorFlags: Set<String> = [
        "read", "write", "encrypt-read", "encrypt-write", "encrypt-authenticated-read", "encrypt-authenticated-write",
        "secure-read", "secure-write", "authorize",
    ]

    private static func parseFlags(_ value: DBusValue?) -> GattFlags? {
        guard let value, value.type == .array(.string), let elements = value.arrayElements else { return nil }
        return GattFlags(elements.compactMap(\.string))
    }

    private static func parseUUID(_ value: DBusValue?, of path: DBusObjectPath) throws(Problem) -> String {
        guard case .string(let text)? = value, let uuid = BluetoothUUID(text) else {
            throw .databaseEntry("\(path) has no valid UUID")
        }
        guard !reservedUUIDs.contains(uuid.canonical) else {
            throw .databaseEntry("\(path) uses \(uuid.canonical), which bluetoothd serves itself")
        }
        return uuid.canonical
    }

    private static func parseHandle(_ value: DBusValue?, of path: DBusObjectPath) throws(Problem) -> UInt16 {
        guard let value else { return 0 }
        guard case .uint16(let handle) = value else {
            throw .databaseEntry("\(path) has a Handle of type '\(value.type.signature)'")
        }
        return handle
    }
}
