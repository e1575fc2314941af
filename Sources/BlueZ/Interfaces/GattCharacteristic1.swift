import DBus

/// `org.bluez.GattCharacteristic1`: a characteristic of a remote device's GATT
/// service, at `/org/bluez/hciN/dev_XX_XX_XX_XX_XX_XX/serviceXXXX/charXXXX`
/// (client side), or one exported by an application (server side, see
/// `LocalGattCharacteristic`).
///
/// A snapshot of the remote object's properties plus the client methods.
/// Values follow the Attribute Protocol's limits: an attribute value holds at
/// most 512 bytes, and one notification or write command at most `mtu - 3`.
/// bluetoothd negotiates the MTU when it connects (517 unless main.conf's
/// `ExchangeMTU` says otherwise, and never more than the peer accepts).
public struct GattCharacteristic1: Sendable, Equatable {
    public static let interface = "org.bluez.GattCharacteristic1"

    /// The longest attribute value the Attribute Protocol allows (`BT_ATT_MAX_VALUE_LEN`).
    public static let maximumValueLength = 512
    /// The ATT MTU bluetoothd offers by default (main.conf `[GATT] ExchangeMTU`, `BT_ATT_MAX_LE_MTU`).
    public static let defaultExchangeMTU: UInt16 = 517
    /// The ATT MTU before any exchange (`BT_ATT_DEFAULT_LE_MTU`).
    public static let minimumMTU: UInt16 = 23

    /// A characteristic property, as listed in `Flags`.
    public struct Flag: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let broadcast = Flag(rawValue: "broadcast")
        public static let read = Flag(rawValue: "read")
        public static let writeWithoutResponse = Flag(rawValue: "write-without-response")
        public static let write = Flag(rawValue: "write")
        public static let notify = Flag(rawValue: "notify")
        public static let indicate = Flag(rawValue: "indicate")
        public static let authenticatedSignedWrites = Flag(rawValue: "authenticated-signed-writes")
        public static let extendedProperties = Flag(rawValue: "extended-properties")
        public static let reliableWrite = Flag(rawValue: "reliable-write")
        public static let writableAuxiliaries = Flag(rawValue: "writable-auxiliaries")
        public static let encryptRead = Flag(rawValue: "encrypt-read")
        public static let encryptWrite = Flag(rawValue: "encrypt-write")
        public static let encryptNotify = Flag(rawValue: "encrypt-notify")
        public static let encryptIndicate = Flag(rawValue: "encrypt-indicate")
        public static let encryptAuthenticatedRead = Flag(rawValue: "encrypt-authenticated-read")
        public static let encryptAuthenticatedWrite = Flag(rawValue: "encrypt-authenticated-write")
        public static let encryptAuthenticatedNotify = Flag(rawValue: "encrypt-authenticated-notify")
        public static let encryptAuthenticatedIndicate = Flag(rawValue: "encrypt-authenticated-indicate")
        public static let secureRead = Flag(rawValue: "secure-read")
        public static let secureWrite = Flag(rawValue: "secure-write")
        public static let secureNotify = Flag(rawValue: "secure-notify")
        public static let secureIndicate = Flag(rawValue: "secure-indicate")
        public static let authorize = Flag(rawValue: "authorize")

        public var description: String { rawValue }
    }

    /// The `type` option of `WriteValue`: which ATT procedure the client uses.
    public enum WriteType: String, Sendable {
        /// Write Without Response: one ATT PDU, at most `mtu - 3` bytes, no
        /// acknowledgement, and no error from the remote application.
        case command
        /// Write Request: acknowledged, and the remote application's error comes
        /// back. Values over `mtu - 3` bytes go as a long (prepared) write.
        case request
        /// Reliable Write (prepared writes checked by echo).
        case reliable
    }

    public let path: DBusObjectPath
    /// The characteristic UUID, 128-bit lowercase as bluetoothd shows it.
    public var uuid: String
    /// The service it belongs to.
    public var service: DBusObjectPath
    public var flags: [Flag]
    /// The ATT MTU of the link (present while connected).
    public var mtu: UInt16?
    /// Whether notifications or indications are enabled (present when the characteristic has them).
    public var notifying: Bool?
    /// The cached value (after a read or a notification), when present.
    public var value: [UInt8]?
    /// The attribute handle (client side).
    public var handle: UInt16?

    /// Reads the characteristic from its properties.
    /// - Throws: `DBusDecodingError` when a required property is missing or mistyped.
    public init(path: DBusObjectPath, properties: [String: DBusValue]) throws(DBusDecodingError) {
        self.path = path
        uuid = try properties.require("UUID", as: String.self).lowercased()
        service = try properties.require("Service")
        flags = try properties.require("Flags", as: [String].self).map(Flag.init(rawValue:))
        mtu = try properties.optional("MTU")
        notifying = try properties.optional("Notifying")
        if let raw = properties["Value"] {
            guard let bytes = raw.bytes else {
                throw .typeMismatch(expected: "ay", actual: raw.type.signature, context: "key 'Value'")
            }
            value = bytes
        } else {
            value = nil
        }
        handle = try properties.optional("Handle")
    }

    /// True when the flags allow notifications or indications.
    public var canNotify: Bool { flags.contains(.notify) || flags.contains(.indicate) }

    // MARK: Client methods

    /// `ReadValue(dict options)`: reads the value from the remote device (a long
    /// read when needed, so up to 512 bytes) and updates the cached `Value`.
    /// - Throws: `DBusError`, such as `org.bluez.Error.NotPermitted` "Read not
    ///   permitted", `NotSupported`, `InProgress` (another read at another offset
    ///   is under way), or `Failed` "Not connected".
    public static func readValue(
        _ characteristic: DBusObjectPath, offset: UInt16 = 0, on connection: DBusConnection,
        timeout: Duration = DBusConnection.defaultTimeout
    ) async throws -> [UInt8] {
        var options: [String: DBusValue] = [:]
        if offset != 0 { options["offset"] = .uint16(offset) }
        let reply = try await connection.call(
            destination: BlueZ.serviceName, path: characteristic, interface: interface, member: "ReadValue",
            [.vardict(options)], timeout: timeout)
        guard reply.body.count == 1, let bytes = reply.body[0].bytes else {
            throw DBusDecodingError.signatureMismatch(expected: "ay", actual: reply.signature.rawValue)
        }
        return bytes
    }

    /// `WriteValue(array{byte} value, dict options)`: writes to the remote device.
    ///
    /// Without `type`, bluetoothd picks the procedure from the flags: reliable
    /// write, else a write request (a long write when the value is over
    /// `mtu - 3` bytes), else a write command.
    /// - Throws: `DBusError`, such as `org.bluez.Error.InvalidArguments` "Invalid
    ///   Length" (over 512 bytes, or the remote application refused the length),
    ///   `Failed` "Failed to initiate write" (a command over `mtu - 3` bytes),
    ///   `NotPermitted`, `NotSupported`, `InProgress` (another write is under way),
    ///   or `Failed` "Not connected".
    public static func writeValue(
        _ characteristic: DBusObjectPath, _ value: [UInt8], type: WriteType? = nil, offset: UInt16 = 0,
        on connection: DBusConnection, timeout: Duration = DBusConnection.defaultTimeout
    ) async throws {
        var options: [String: DBusValue] = [:]
        if let type { options["type"] = .string(type.rawValue) }
        if offset != 0 { options["offset"] = .uint16(offset) }
        try await connection.call(
            destination: BlueZ.serviceName, path: characteristic, interface: interface, member: "WriteValue",
            [.bytes(value), .vardict(options)], timeout: timeout)
    }

    /// `StartNotify()`: starts this client's notification session. Each
    /// notification then arrives as a `PropertiesChanged` of `Value`, even when
    /// the bytes repeat; follow them with `valueChanges(of:on:)`, subscribed first.
    /// A second StartNotify from the same client succeeds and does nothing.
    /// - Throws: `DBusError`: `org.bluez.Error.NotSupported` (no notify or
    ///   indicate flag), `NotConnected`, `NotPermitted`, `Failed`.
    public static func startNotify(_ characteristic: DBusObjectPath, on connection: DBusConnection) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: characteristic, interface: interface, member: "StartNotify")
    }

    /// `StopNotify()`: ends this client's notification session.
    /// - Throws: `DBusError`: `org.bluez.Error.Failed` "No notify session started".
    public static func stopNotify(_ characteristic: DBusObjectPath, on connection: DBusConnection) async throws {
        try await connection.call(
            destination: BlueZ.serviceName, path: characteristic, interface: interface, member: "StopNotify")
    }

    /// Every new `Value` of the remote characteristic, in the order bluetoothd
    /// emitted them: one element per notification (or read).
    ///
    /// The match rule is on the bus when this returns, so subscribe before
    /// `startNotify` to miss nothing. The sequence ends with an error when the
    /// connection closes; end the iteration to unsubscribe.
    public static func valueChanges(of characteristic: DBusObjectPath, on connection: DBusConnection) async throws
        -> AsyncThrowingStream<[UInt8], Error>
    {
        let rule = DBusMatchRule(
            sender: BlueZ.serviceName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            path: characteristic, arguments: [0: interface])
        let (stream, continuation) = AsyncThrowingStream<[UInt8], Error>.makeStream()
        let handler = try await connection.addSignalHandler(
            matching: rule,
            { message in
                guard message.body.count == 3, let changed = message.body[1].vardict,
                    let value = changed["Value"]?.bytes
                else { return }
                continuation.yield(value)
            },
            onFinish: { error in continuation.finish(throwing: error) })
        continuation.onTermination = { _ in handler.cancel() }
        return stream
    }
}
