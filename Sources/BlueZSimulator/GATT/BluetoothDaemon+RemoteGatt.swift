import DBus

/// The objects bluetoothd's GATT client exports for a connected device: the
/// other adapter's database as `GattService1`, `GattCharacteristic1` and (for
/// the CCC) `GattDescriptor1` objects under the Device1 path, as 5.66 shows
/// them (checked on the VM rig).
extension BluetoothDaemon {
    static let gattServiceInterface = "org.bluez.GattService1"
    static let gattDescriptorInterface = "org.bluez.GattDescriptor1"
    static let cccUUID = BuiltinGattServices.uuid16("2902")

    /// One service of the other adapter's database, as the client will show it.
    private struct ServiceSpec {
        var uuid: String
        var handle: UInt16
        var primary: Bool
        var application: RegisteredApplication?
        var characteristics: [CharacteristicSpec]
    }

    private struct CharacteristicSpec {
        var uuid: String
        var handle: UInt16
        var flags: GattFlags
        var source: RemoteSource
        var value: [UInt8]
    }

    /// The services of `adapter`'s database a remote client sees, by handle.
    private func databaseSpecs(of adapter: String) -> [ServiceSpec] {
        var specs = BuiltinGattServices.exported.map { service in
            ServiceSpec(
                uuid: service.uuid, handle: service.handle, primary: true, application: nil,
                characteristics: service.characteristics.compactMap { characteristic in
                    GattFlags(characteristic.flags).map {
                        CharacteristicSpec(
                            uuid: characteristic.uuid, handle: characteristic.handle, flags: $0, source: .builtin,
                            value: characteristic.value)
                    }
                })
        }
        for application in gatt.applications where application.adapter == adapter && application.state == .active {
            for service in application.services {
                specs.append(
                    ServiceSpec(
                        uuid: service.uuid, handle: service.handle, primary: service.primary, application: application,
                        characteristics: service.characteristics.map {
                            CharacteristicSpec(
                                uuid: $0.uuid, handle: $0.handle, flags: $0.flags,
                                source: .application(id: application.id, owner: application.owner, path: $0.path),
                                value: [])
                        }))
            }
        }
        return specs.sorted { $0.handle < $1.handle }
    }

    /// Brings the client objects under `device` in line with the other end's
    /// database: objects of services that went away go, new ones are exported,
    /// unchanged ones stay (as after a reconnection). Sessions started while
    /// disconnected are registered now. Updates Device1.UUIDs.
    func refreshView(of device: RemoteDevice, link: LELink) {
        guard let clientAdapter = device.adapterPath.elements.last.map(String.init),
            let peer = link.peer(of: clientAdapter)
        else { return }
        let view: RemoteGattView
        if let existing = gatt.views[device.path] {
            view = existing
        } else {
            view = RemoteGattView(devicePath: device.path, clientAdapter: clientAdapter)
            gatt.views[device.path] = view
        }
        let specs = databaseSpecs(of: peer)
        for service in view.services
        where !specs.contains(where: { service.matches(uuid: $0.uuid, handle: $0.handle, applicationID: $0.application?.id) }) {
            unexport(service)
        }
        view.services.removeAll { service in
            !specs.contains { service.matches(uuid: $0.uuid, handle: $0.handle, applicationID: $0.application?.id) }
        }
        for spec in specs
        where !view.services.contains(where: { $0.matches(uuid: spec.uuid, handle: spec.handle, applicationID: spec.application?.id) }) {
            guard let service = makeService(spec, device: device, clientAdapter: clientAdapter, mtu: link.mtu) else {
                continue
            }
            view.services.append(service)
        }
        view.services.sort { $0.handle < $1.handle }

        var uuids = Set(device.uuids)
        uuids.formUnion(BuiltinGattServices.deviceUUIDs)
        for spec in specs where spec.primary { uuids.insert(spec.uuid) }
        let sorted = uuids.sorted()
        if sorted != device.uuids {
            device.uuids = sorted
            emitDeviceChanges(device, ["UUIDs": .strings(sorted)])
        }
        if link.state == .connected {
            for characteristic in view.characteristics where !characteristic.notifyClients.isEmpty {
                subscribe(characteristic)
                publishNotifying(characteristic, true)
            }
        }
    }

    /// The database of `adapter` changed: clients connected to it re-read it.
    func databaseChanged(on adapter: String) {
        for link in gatt.links where link.state == .connected {
            guard let peer = link.peer(of: adapter), let device = link.device(on: peer) else { continue }
            refreshView(of: device, link: link)
        }
    }

    /// Removes the client objects of a device that goes away (its link drops first).
    func forgetGatt(of device: RemoteDevice) {
        dropLink(of: device)
        guard let view = gatt.views.removeValue(forKey: device.path) else { return }
        for service in view.services { unexport(service) }
    }

    // MARK: Exporting

    private func makeService(_ spec: ServiceSpec, device: RemoteDevice, clientAdapter: String, mtu: UInt16)
        -> RemoteService?
    {
        guard let path = try? device.path.appending("service" + Self.hex4(spec.handle)) else { return nil }
        let service = RemoteService(path: path, uuid: spec.uuid, handle: spec.handle, applicationID: spec.application?.id)
        let serviceInterface = DBusInterface(
            Self.gattServiceInterface,
            properties: [
                DBusProperty("UUID", spec.uuid, changeSignal: .const),
                DBusProperty("Device", device.path, changeSignal: .const),
                DBusProperty("Primary", spec.primary, changeSignal: .const),
                DBusProperty("Includes", [DBusObjectPath](), changeSignal: .const),
            ])
        enqueueExport(service.box, path, [serviceInterface])
        for characteristicSpec in spec.characteristics {
            guard let characteristicPath = try? path.appending("char" + Self.hex4(characteristicSpec.handle)) else {
                continue
            }
            let characteristic = RemoteCharacteristic(
                path: characteristicPath, devicePath: device.path, clientAdapter: clientAdapter,
                uuid: characteristicSpec.uuid, flags: characteristicSpec.flags, handle: characteristicSpec.handle,
                source: characteristicSpec.source, builtinValue: characteristicSpec.value)
            service.characteristics.append(characteristic)
            gatt.characteristics[characteristicPath] = characteristic
            enqueueExport(characteristic.box, characteristicPath, [characteristicInterface(characteristic, service: path, mtu: mtu)])
            if let descriptorBox = characteristic.descriptorBox,
                let descriptorPath = try? characteristicPath.appending("desc" + Self.hex4(characteristic.cccHandle))
            {
                enqueueExport(descriptorBox, descriptorPath, [cccInterface(characteristicPath)])
            }
        }
        return service
    }

    private func unexport(_ service: RemoteService) {
        for characteristic in service.characteristics {
            gatt.characteristics[characteristic.path] = nil
            unsubscribe(characteristic)
            let boxes = [characteristic.descriptorBox, characteristic.box].compactMap { $0 }
            writer.enqueue { for box in boxes { await box.unexport() } }
        }
        let box = service.box
        writer.enqueue { await box.unexport() }
    }

    private func enqueueExport(_ box: ExportedObjectBox, _ path: DBusObjectPath, _ interfaces: [DBusInterface]) {
        let connection = self.connection
        let log = self.log
        writer.enqueue { await box.export(path, interfaces: interfaces, on: connection, log: log) }
    }

    private func characteristicInterface(_ characteristic: RemoteCharacteristic, service: DBusObjectPath, mtu: UInt16)
        -> DBusInterface
    {
        let path = characteristic.path
        var properties: [DBusProperty] = [
            DBusProperty("UUID", characteristic.uuid, changeSignal: .const),
            DBusProperty("Service", service, changeSignal: .const),
            // Emitted by the daemon itself: bluetoothd signals every read and notification.
            DBusProperty("Value", type: .array(.byte), value: .bytes([]), changeSignal: .false),
        ]
        if characteristic.flags.canNotify { properties.append(DBusProperty("Notifying", false)) }
        properties.append(DBusProperty("Flags", characteristic.flags.remoteNames, changeSignal: .const))
        if characteristic.flags.properties.contains(.writeWithoutResponse) {
            properties.append(DBusProperty("WriteAcquired", false))
        }
        if characteristic.flags.properties.contains(.notify) { properties.append(DBusProperty("NotifyAcquired", false)) }
        properties.append(DBusProperty("MTU", mtu))
        return DBusInterface(
            Self.gattCharacteristicInterface,
            methods: [
                DBusMethod("ReadValue", inputs: "a{sv}", outputs: "ay", argumentNames: ["options", "value"]) {
                    [weak self] call in
                    guard let self else { throw BlueZError.failed("Not connected") }
                    return [.bytes(try await self.remoteRead(path, options: call.body[0]))]
                },
                DBusMethod("WriteValue", inputs: "aya{sv}", argumentNames: ["value", "options"]) { [weak self] call in
                    guard let self else { throw BlueZError.failed("Not connected") }
                    try await self.remoteWrite(path, value: call.body[0].bytes ?? [], options: call.body[1])
                    return []
                },
                DBusMethod("StartNotify") { [weak self] call in
                    guard let self else { throw BlueZError.failed("Not connected") }
                    try await self.remoteStartNotify(path, sender: call.sender ?? "")
                    return []
                },
                DBusMethod("StopNotify") { [weak self] call in
                    guard let self else { throw BlueZError.failed("No notify session started") }
                    try await self.remoteStopNotify(path, sender: call.sender ?? "")
                    return []
                },
            ],
            properties: properties)
    }

    /// The Client Characteristic Configuration descriptor: bluetoothd refuses
    /// writes to it (StartNotify and StopNotify are the way), reads give its state.
    private func cccInterface(_ characteristicPath: DBusObjectPath) -> DBusInterface {
        DBusInterface(
            Self.gattDescriptorInterface,
            methods: [
                DBusMethod("ReadValue", inputs: "a{sv}", outputs: "ay", argumentNames: ["options", "value"]) {
                    [weak self] _ in
                    guard let self else { throw BlueZError.failed("Not connected") }
                    return [.bytes(try await self.readCCC(of: characteristicPath))]
                },
                DBusMethod("WriteValue", inputs: "aya{sv}", argumentNames: ["value", "options"]) { _ in
                    throw BlueZError.notPermitted("Write not permitted")
                },
            ],
            properties: [
                DBusProperty("UUID", Self.cccUUID, changeSignal: .const),
                DBusProperty("Characteristic", characteristicPath, changeSignal: .const),
                DBusProperty("Value", type: .array(.byte), value: .bytes([]), changeSignal: .false),
            ])
    }

    func readCCC(of characteristicPath: DBusObjectPath) throws(DBusError) -> [UInt8] {
        guard let characteristic = gatt.characteristics[characteristicPath] else { throw BlueZError.doesNotExist() }
        guard activeLink(for: characteristic) != nil else { throw BlueZError.failed("Not connected") }
        return [characteristic.subscribed ? 0x01 : 0x00, 0x00]
    }

    // MARK: Publishing client state

    /// Stores the cached Value and emits PropertiesChanged for it, even when it did not change.
    func publishValue(_ characteristic: RemoteCharacteristic, _ value: [UInt8]) {
        characteristic.value = value
        let box = characteristic.box
        let path = characteristic.path
        let connection = self.connection
        let log = self.log
        writer.enqueue {
            await box.set(Self.gattCharacteristicInterface, ["Value": .bytes(value)], log: log)
            do {
                try connection.emitSignal(
                    path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                    [.string(Self.gattCharacteristicInterface), .vardict(["Value": .bytes(value)]), .strings([])])
            } catch {
                log.error("cannot emit PropertiesChanged on \(path): \(error)")
            }
        }
    }

    func publishNotifying(_ characteristic: RemoteCharacteristic, _ on: Bool) {
        guard characteristic.notifying != on else { return }
        characteristic.notifying = on
        let box = characteristic.box
        let log = self.log
        writer.enqueue { await box.set(Self.gattCharacteristicInterface, ["Notifying": .boolean(on)], log: log) }
    }
}
