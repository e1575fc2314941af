import DBus
import Synchronization

extension GattApplication {
    /// One exported `org.bluez.GattCharacteristic1` object of a `GattApplication`.
    ///
    /// `notify` sends a value to every remote device that enabled notifications:
    /// it stores `Value` and emits `PropertiesChanged` for it every time, also
    /// when the bytes repeat, because bluetoothd sends one notification per
    /// signal. bluetoothd cuts a notification to `mtu - 3` bytes (and any value
    /// to 512) without telling anyone, so chunk to `GattRequestOptions.maximumNotificationLength`.
    public final class Characteristic: Sendable {
        /// The flags bluetoothd 5.66 understands (`parse_chrc_flags`).
        static let knownFlags: Set<GattCharacteristic1.Flag> = [
            .broadcast, .read, .writeWithoutResponse, .write, .notify, .indicate, .authenticatedSignedWrites,
            .extendedProperties, .reliableWrite, .writableAuxiliaries, .encryptRead, .encryptWrite, .encryptNotify,
            .encryptIndicate, .encryptAuthenticatedRead, .encryptAuthenticatedWrite, .encryptAuthenticatedNotify,
            .encryptAuthenticatedIndicate, .secureRead, .secureWrite, .secureNotify, .secureIndicate, .authorize,
        ]

        public let path: DBusObjectPath
        public let uuid: String
        public let flags: [GattCharacteristic1.Flag]
        private let definition: LocalGattCharacteristic
        private let object = Mutex<DBusExportedObject?>(nil)
        private let notifying = Mutex(false)

        init(path: DBusObjectPath, definition: LocalGattCharacteristic) {
            self.path = path
            self.uuid = definition.uuid
            self.flags = definition.flags
            self.definition = definition
        }

        /// True between bluetoothd's StartNotify and StopNotify.
        public var isNotifying: Bool { notifying.withLock { $0 } }

        /// Sends `value` as a notification (or indication) to the subscribed devices.
        /// - Throws: `DBusError.notSupported` when the characteristic cannot notify,
        ///   `.invalidArgs` for more than 512 bytes, `.failed` once unexported.
        public func notify(_ value: [UInt8]) async throws {
            guard definition.canNotify else {
                throw DBusError(.notSupported, "characteristic \(uuid) has neither the notify nor the indicate flag")
            }
            guard value.count <= GattCharacteristic1.maximumValueLength else {
                throw DBusError(
                    .invalidArgs,
                    "a notification carries at most \(GattCharacteristic1.maximumValueLength) bytes, not \(value.count)")
            }
            guard let object = object.withLock({ $0 }) else {
                throw DBusError(.failed, "characteristic \(uuid) is not exported")
            }
            try await object.setProperty("Value", of: GattCharacteristic1.interface, to: .bytes(value))
            try object.emitSignal(
                interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                [.string(GattCharacteristic1.interface), .vardict(["Value": .bytes(value)]), .strings([])])
        }

        // MARK: Export

        func export(service: DBusObjectPath, on connection: DBusConnection) async throws {
            var properties: [DBusProperty] = [
                DBusProperty("UUID", uuid, changeSignal: .const),
                DBusProperty("Service", service, changeSignal: .const),
                DBusProperty("Flags", flags.map(\.rawValue), changeSignal: .const),
            ]
            if definition.canNotify {
                // Value's signal is sent by `notify` itself, once per call.
                properties.append(DBusProperty("Value", type: .array(.byte), value: .bytes([]), changeSignal: .false))
                properties.append(DBusProperty("Notifying", false))
            }
            let interface = DBusInterface(
                GattCharacteristic1.interface,
                methods: [
                    DBusMethod("ReadValue", inputs: "a{sv}", outputs: "ay", argumentNames: ["options", "value"]) {
                        [weak self] call in
                        guard let self else { throw GattError.failed("the characteristic is gone") }
                        return [.bytes(try await self.read(call.body[0]))]
                    },
                    DBusMethod("WriteValue", inputs: "aya{sv}", argumentNames: ["value", "options"]) {
                        [weak self] call in
                        guard let self else { throw GattError.failed("the characteristic is gone") }
                        try await self.write(call.body[0], call.body[1])
                        return []
                    },
                    DBusMethod("StartNotify") { [weak self] _ in
                        await self?.setNotifying(true)
                        return []
                    },
                    DBusMethod("StopNotify") { [weak self] _ in
                        await self?.setNotifying(false)
                        return []
                    },
                ],
                properties: properties)
            let exported = try await connection.export(path, interfaces: [interface])
            object.withLock { $0 = exported }
        }

        func unexport() async {
            guard let exported = object.withLock({ object in defer { object = nil }; return object }) else { return }
            await exported.unexport()
        }

        // MARK: Calls from bluetoothd

        private func read(_ options: DBusValue) async throws -> [UInt8] {
            guard let handler = definition.onRead else { throw GattError.notSupported() }
            let parsed = try Self.options(options)
            return try await Self.mapErrors { try await handler(parsed) }
        }

        private func write(_ value: DBusValue, _ options: DBusValue) async throws {
            guard let handler = definition.onWrite else { throw GattError.notSupported() }
            guard let bytes = value.bytes else { throw GattError.failed("WriteValue takes ay") }
            let parsed = try Self.options(options)
            try await Self.mapErrors { try await handler(bytes, parsed) }
        }

        private func setNotifying(_ on: Bool) async {
            let changed = notifying.withLock { value in
                defer { value = on }
                return value != on
            }
            if changed, definition.canNotify, let exported = object.withLock({ $0 }) {
                try? await exported.setProperty("Notifying", of: GattCharacteristic1.interface, to: .boolean(on))
            }
            if on { await definition.onStartNotify?() } else { await definition.onStopNotify?() }
        }

        private static func options(_ value: DBusValue) throws(DBusError) -> GattRequestOptions {
            guard let map = value.vardict else { throw GattError.failed("the options are not a{sv}") }
            do { return try GattRequestOptions(map) } catch {
                throw DBusError(name: DBusError.Name.bluezInvalidArguments.rawValue, message: "\(error)")
            }
        }

        /// Passes `DBusError`s on; turns anything else into a plain `Failed`, so
        /// that no error text (which might hold secrets) leaves the process.
        private static func mapErrors<T>(_ body: () async throws -> T) async throws -> T {
            do { return try await body() } catch let error as DBusError { throw error } catch {
                throw GattError.failed("the application could not handle the request")
            }
        }
    }
}
