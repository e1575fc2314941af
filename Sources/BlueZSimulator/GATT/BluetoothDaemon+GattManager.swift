import DBus

/// `org.bluez.GattManager1` on each adapter: applications register their GATT
/// services into the adapter's local database, which connected devices then
/// see (BluetoothDaemon+RemoteGatt.swift).
extension BluetoothDaemon {
    static let gattManagerInterface = "org.bluez.GattManager1"
    static let gattCharacteristicInterface = "org.bluez.GattCharacteristic1"

    func makeGattManagerInterface(_ adapter: SimulatedAdapter) -> DBusInterface {
        let name = adapter.name
        return DBusInterface(
            Self.gattManagerInterface,
            methods: [
                DBusMethod("RegisterApplication", inputs: "oa{sv}", argumentNames: ["application", "options"]) {
                    [weak self] call in
                    guard case .objectPath(let path) = call.body[0] else { throw BlueZError.invalidArguments() }
                    guard let self else { throw BlueZError.failed("bluetoothd is shutting down") }
                    try await self.registerApplication(on: name, sender: call.sender ?? "", path: path)
                    return []
                },
                DBusMethod("UnregisterApplication", inputs: "o", argumentNames: ["application"]) { [weak self] call in
                    guard case .objectPath(let path) = call.body[0] else { throw BlueZError.invalidArguments() }
                    try await self?.unregisterApplication(on: name, sender: call.sender ?? "", path: path)
                    return []
                },
            ])
    }

    // MARK: GattManager1 methods

    /// RegisterApplication, as bluetoothd 5.66 runs it: follow the
    /// application's signals, read its tree with GetManagedObjects on the
    /// caller before replying, check it (GattApplicationParser), place its
    /// services after bluetoothd's own in the adapter's database, and tell
    /// connected devices (their clients see the new services).
    func registerApplication(on name: String, sender: String, path: DBusObjectPath) async throws(DBusError) {
        let adapter = try self.adapter(name)
        if gatt.applications.contains(where: { $0.adapter == name && $0.owner == sender && $0.path == path }) {
            throw BlueZError.alreadyExists()
        }
        let application = RegisteredApplication(id: makeID(), owner: sender, path: path, adapter: name)
        gatt.applications.append(application)
        watchClient(sender)
        log.info("\(name): RegisterApplication \(path) from \(sender)")

        let signals = try? await connection.signals(matching: DBusMatchRule(sender: sender, pathNamespace: path))
        var services: [GattServiceRecord]
        do throws(GattApplicationParser.Problem) {
            let objects = await fetchApplicationObjects(owner: sender, path: path)
            guard let objects else { throw .noObject }
            services = try GattApplicationParser.parse(objects)
        } catch {
            Self.discard(signals)
            gatt.applications.removeAll { $0 === application }
            log.info("\(name): application \(path) of \(sender) refused: \(error.reason)")
            throw error.error
        }
        guard running, adapters[name] === adapter, gatt.applications.contains(where: { $0 === application }) else {
            Self.discard(signals)
            gatt.applications.removeAll { $0 === application }
            throw BlueZError.failed("Failed to register application")
        }
        do throws(GattApplicationParser.Problem) {
            try place(&services, on: name)
        } catch {
            Self.discard(signals)
            gatt.applications.removeAll { $0 === application }
            log.info("\(name): application \(path) of \(sender) refused: \(error.reason)")
            throw error.error
        }
        application.services = services
        application.state = .active
        if let signals {
            let id = application.id
            application.watch = Task { [weak self] in
                do {
                    for try await message in signals { await self?.applicationSignal(id, message) }
                } catch {}
            }
        }
        let summary = services.map { "\($0.uuid)@0x\(Self.hex4($0.handle))" }.joined(separator: ", ")
        log.info("\(name): application \(path) of \(sender) registered: \(summary)")
        databaseChanged(on: name)
        await writer.flush()
    }

    /// UnregisterApplication: only the registering client can, by the same path.
    func unregisterApplication(on name: String, sender: String, path: DBusObjectPath) async throws(DBusError) {
        _ = try adapter(name)
        guard
            let application = gatt.applications.first(where: {
                $0.adapter == name && $0.owner == sender && $0.path == path
            })
        else { throw BlueZError.doesNotExist() }
        log.info("\(name): UnregisterApplication \(path) from \(sender)")
        remove(application)
        await writer.flush()
    }

    /// Takes an application out of its adapter's database; connected devices lose its services.
    func remove(_ application: RegisteredApplication) {
        application.watch?.cancel()
        application.watch = nil
        gatt.applications.removeAll { $0 === application }
        for key in gatt.notifyCounts.keys where key.application == application.id {
            gatt.notifyCounts[key] = nil
        }
        if application.state == .active { databaseChanged(on: application.adapter) }
    }

    /// A client left the bus: its applications go, and its notification
    /// sessions on remote characteristics end. Returns true when anything changed.
    func gattClientVanished(_ owner: String) -> Bool {
        var changed = false
        for application in gatt.applications where application.owner == owner {
            log.info("\(application.adapter): application \(application.path) of \(owner) dropped: client left")
            remove(application)
            changed = true
        }
        for characteristic in gatt.characteristics.values where characteristic.notifyClients.contains(owner) {
            endNotifySession(of: owner, on: characteristic)
            changed = true
        }
        return changed
    }

    /// The adapter goes away: its links drop and its applications with it.
    func dropGatt(of adapter: SimulatedAdapter) {
        dropLinks(of: adapter)
        for application in gatt.applications where application.adapter == adapter.name {
            application.watch?.cancel()
            gatt.applications.removeAll { $0 === application }
        }
    }

    // MARK: The application's side

    /// GetManagedObjects on the application's root, from its owner; nil when it fails.
    nonisolated func fetchApplicationObjects(owner: String, path: DBusObjectPath) async -> GattApplicationParser.Objects? {
        guard
            let reply = try? await connection.call(
                destination: owner, path: path, interface: Self.objectManagerInterface, member: "GetManagedObjects")
        else { return nil }
        return GattApplicationParser.objects(from: reply)
    }

    /// Places each service in the adapter's database: at its Handle if it asked
    /// for one, else in the first gap that fits after bluetoothd's own services.
    private func place(_ services: inout [GattServiceRecord], on adapter: String) throws(GattApplicationParser.Problem) {
        var taken: [ClosedRange<Int>] = [1...Int(BuiltinGattServices.firstFreeHandle) - 1]
        for application in gatt.applications where application.adapter == adapter && application.state == .active {
            for service in application.services { taken.append(Int(service.handle)...Int(service.endHandle)) }
        }
        for index in services.indices {
            let count = services[index].attributeCount
            func free(_ range: ClosedRange<Int>) -> Bool {
                range.upperBound <= 0xFFFF && !taken.contains { $0.overlaps(range) }
            }
            var start: Int?
            if services[index].requestedHandle != 0 {
                let wanted = Int(services[index].requestedHandle)
                if free(wanted...(wanted + count - 1)) { start = wanted }
            } else {
                var candidate = Int(BuiltinGattServices.firstFreeHandle)
                for range in taken.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                    if free(candidate...(candidate + count - 1)) { break }
                    candidate = max(candidate, range.upperBound + 1)
                }
                if free(candidate...(candidate + count - 1)) { start = candidate }
            }
            guard let start else {
                throw .databaseEntry("no room for service \(services[index].path) in the database")
            }
            services[index].place(at: UInt16(start))
            taken.append(start...(start + count - 1))
        }
    }

    /// A signal from a registered application: a characteristic's new Value is
    /// a notification; a service object that goes away leaves the database.
    func applicationSignal(_ id: UInt64, _ message: DBusMessage) {
        guard running, let application = gatt.application(id), application.state == .active,
            let path = message.path
        else { return }
        switch (message.interface, message.member) {
        case (Self.propertiesInterface?, "PropertiesChanged"?):
            guard message.body.count == 3, case .string(Self.gattCharacteristicInterface) = message.body[0],
                let characteristic = application.characteristic(at: path), characteristic.flags.canNotify
            else { return }
            let changed = message.body[1].vardict ?? [:]
            let invalidated = message.body[2].arrayElements?.compactMap(\.string) ?? []
            if let value = changed["Value"] {
                // bluetoothd ignores a Value that is not a byte array.
                guard let bytes = value.bytes else { return }
                notify(from: application, characteristic: characteristic, bytes)
            } else if invalidated.contains("Value") {
                notify(from: application, characteristic: characteristic, [])
            }
        case (Self.objectManagerInterface?, "InterfacesRemoved"?):
            guard path == application.path, message.body.count == 2, case .objectPath(let object) = message.body[0],
                application.services.contains(where: { $0.path == object })
            else { return }
            log.info("\(application.adapter): service \(object) of \(application.owner) went away; unregistered")
            application.services.removeAll { $0.path == object }
            databaseChanged(on: application.adapter)
        default:
            return
        }
    }

    static func hex4(_ value: UInt16) -> String {
        DeviceAddress.hexByte(UInt8(value >> 8)).lowercased() + DeviceAddress.hexByte(UInt8(value & 0xFF)).lowercased()
    }
}
