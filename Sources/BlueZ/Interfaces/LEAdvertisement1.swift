import DBus

/// The data of an `org.bluez.LEAdvertisement1` object: what bluetoothd should
/// put on the air. Absent (nil or empty) properties are not exported at all,
/// as BlueZ expects.
public struct LEAdvertisementData: Sendable, Equatable {
    /// "broadcast" (non-connectable) or "peripheral" (connectable).
    public enum AdvertisingType: String, Sendable {
        case broadcast, peripheral
    }

    public var type: AdvertisingType
    /// Manufacturer Specific Data by company ID.
    public var manufacturerData: [UInt16: [UInt8]]
    /// 128-bit service UUIDs for the Service UUID field.
    public var serviceUUIDs: [String]
    /// Local name; it uses space in the 31 bytes, so handoff leaves it out.
    public var localName: String?
    /// System features to include ("tx-power", "appearance", "local-name").
    public var includes: [String]
    /// General discoverable. Must stay nil with `.broadcast`.
    public var discoverable: Bool?
    /// Advertising interval bounds in milliseconds (honoured from BlueZ 5.77, or with `-E`).
    public var minInterval: UInt32?
    public var maxInterval: UInt32?
    /// Rotation duration in seconds when several advertisements share the adapter.
    public var duration: UInt16?
    /// Lifetime in seconds; bluetoothd releases the advertisement after it.
    public var timeout: UInt16?

    public init(
        type: AdvertisingType = .broadcast, manufacturerData: [UInt16: [UInt8]] = [:], serviceUUIDs: [String] = [],
        localName: String? = nil, includes: [String] = [], discoverable: Bool? = nil,
        minInterval: UInt32? = nil, maxInterval: UInt32? = nil, duration: UInt16? = nil, timeout: UInt16? = nil
    ) {
        self.type = type
        self.manufacturerData = manufacturerData
        self.serviceUUIDs = serviceUUIDs
        self.localName = localName
        self.includes = includes
        self.discoverable = discoverable
        self.minInterval = minInterval
        self.maxInterval = maxInterval
        self.duration = duration
        self.timeout = timeout
    }

    /// The properties as exported, by name.
    var properties: [String: DBusValue] {
        var out: [String: DBusValue] = ["Type": .string(type.rawValue)]
        if !manufacturerData.isEmpty { out["ManufacturerData"] = Self.encode(manufacturerData) }
        if !serviceUUIDs.isEmpty { out["ServiceUUIDs"] = .strings(serviceUUIDs) }
        if let localName { out["LocalName"] = .string(localName) }
        if !includes.isEmpty { out["Includes"] = .strings(includes) }
        if let discoverable { out["Discoverable"] = .boolean(discoverable) }
        if let minInterval { out["MinInterval"] = .uint32(minInterval) }
        if let maxInterval { out["MaxInterval"] = .uint32(maxInterval) }
        if let duration { out["Duration"] = .uint16(duration) }
        if let timeout { out["Timeout"] = .uint16(timeout) }
        return out
    }

    /// `a{qv}` with each variant holding `ay`, sorted by company ID.
    static func encode(_ data: [UInt16: [UInt8]]) -> DBusValue {
        .dictionary(
            key: .uint16, value: .variant,
            data.sorted { $0.key < $1.key }.map { (.uint16($0.key), .variant(.bytes($0.value))) })
    }
}

/// An advertisement this process exports as `org.bluez.LEAdvertisement1` and
/// registers with `LEAdvertisingManager1`.
///
/// `update` changes the data in place: it emits `PropertiesChanged`, and
/// bluetoothd puts the new data on the air without a new registration.
/// bluetoothd calls `Release` when it drops the advertisement on its own
/// (shutting down, adapter gone, timeout), not after `UnregisterAdvertisement`.
public final class LEAdvertisement1: Sendable {
    public static let interface = "org.bluez.LEAdvertisement1"

    /// Where the object lives.
    public let path: DBusObjectPath
    /// The property names exported; a change of this set needs a new export.
    public let exportedNames: Set<String>
    private let object: DBusExportedObject

    private init(path: DBusObjectPath, exportedNames: Set<String>, object: DBusExportedObject) {
        self.path = path
        self.exportedNames = exportedNames
        self.object = object
    }

    /// Exports the advertisement object at `path`.
    /// - Parameter onRelease: runs when bluetoothd calls `Release`.
    public static func export(
        _ data: LEAdvertisementData, at path: DBusObjectPath, on connection: DBusConnection,
        onRelease: @escaping @Sendable () -> Void
    ) async throws -> LEAdvertisement1 {
        let properties = data.properties
        let interface = DBusInterface(
            interface,
            methods: [
                DBusMethod("Release") { _ in
                    onRelease()
                    return []
                }
            ],
            properties: properties.sorted { $0.key < $1.key }.map { name, value in
                DBusProperty(name, type: value.type, value: value)
            })
        let object = try await connection.export(path, interfaces: [interface])
        return LEAdvertisement1(path: path, exportedNames: Set(properties.keys), object: object)
    }

    /// Puts new data on the air by emitting `PropertiesChanged`.
    /// - Throws: `DBusError.invalidArgs` when `data` adds or removes a property;
    ///   unexport and export again for that.
    public func update(_ data: LEAdvertisementData) async throws {
        let properties = data.properties
        guard Set(properties.keys) == exportedNames else {
            throw DBusError(.invalidArgs, "the advertisement's set of properties changed; export it again")
        }
        try await object.setProperties(of: Self.interface, properties)
    }

    /// Replaces the data without telling anyone: for an advertisement that
    /// bluetoothd does not hold, which reads it afresh at `RegisterAdvertisement`.
    ///
    /// A `PropertiesChanged` on an object bluetoothd has just let go of can make
    /// BlueZ 5.66 refresh the advertisement client it is freeing (seen on the VM
    /// rig: bluetoothd aborted in `dbus_message_new_method_call` with the freed
    /// client's path). Nothing emitted, nothing to race with.
    /// - Throws: `DBusError.invalidArgs` when `data` adds or removes a property.
    public func replace(with data: LEAdvertisementData) async throws {
        let properties = data.properties
        guard Set(properties.keys) == exportedNames else {
            throw DBusError(.invalidArgs, "the advertisement's set of properties changed; export it again")
        }
        try await object.setProperties(of: Self.interface, properties, announce: false)
    }

    /// Removes the object from the bus.
    public func unexport() async {
        await object.unexport()
    }
}
