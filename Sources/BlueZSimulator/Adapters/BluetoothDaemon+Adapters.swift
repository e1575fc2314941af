import DBus

extension BluetoothDaemon {
    /// bluetoothd's defaults for what an adapter reports about itself.
    static let adapterUUIDs = [
        "00001800-0000-1000-8000-00805f9b34fb",  // Generic Access
        "00001801-0000-1000-8000-00805f9b34fb",  // Generic Attribute
        "0000180a-0000-1000-8000-00805f9b34fb",  // Device Information
    ]
    /// bluetoothd's DeviceID default: Linux Foundation, BlueZ, version 5.66.
    static let modalias = "usb:v1D6Bp0246d0542"

    // MARK: Adding and removing

    /// Adds an adapter: InterfacesAdded with Powered false, then Powered true.
    func addAdapter(_ name: String, killedScanUntil: ContinuousClock.Instant? = nil) {
        guard let index = SimulatedAdapter.index(of: name), adapters[name] == nil else { return }
        let adapter = SimulatedAdapter(name: name, index: index, systemName: configuration.systemName)
        adapter.killedScanUntil = killedScanUntil
        adapters[name] = adapter
        adapterOrder.append(name)
        let interfaces = makeInterfaces(for: adapter)
        let box = adapter.box
        let path = adapter.path
        let connection = self.connection
        let log = self.log
        writer.enqueue { await box.export(path, interfaces: interfaces, on: connection, log: log) }
        log.info("\(name): added (\(adapter.address))")
        // AutoEnable: bluetoothd powers every new adapter on.
        adapter.switches.update { $0.powered = true }
        publish(adapter, [SimulatedAdapter.adapterInterface: ["Powered": .boolean(true)]])
        powerUp(adapter)
    }

    /// Removes an adapter as when its controller is unplugged: its
    /// advertisements get Release, its devices and sessions go, then
    /// InterfacesRemoved.
    func removeAdapter(_ name: String) async throws(DBusError) {
        let adapter = try self.adapter(name)
        if flood?.adapter == name { stopFlood() }
        dropGatt(of: adapter)
        for advertisement in adapter.advertisements {
            if advertisement.state == .active { release(advertisement) }
            remove(advertisement, from: adapter, announce: false)
        }
        for device in Array(adapter.devices.values) { removeDevice(device, from: adapter) }
        dropMonitors(of: adapter) { _ in true }
        adapter.clients.removeAll()
        stopTimers(of: adapter)
        adapters[name] = nil
        adapterOrder.removeAll { $0 == name }
        let box = adapter.box
        writer.enqueue { await box.unexport() }
        await writer.flush()
        log.info("\(name): removed")
    }

    /// The adapters whose controller scans for us now: a kill leaves their scan running.
    func scanningAdapters() -> [String] {
        adapterOrder.filter { adapters[$0]?.discovering == true }
    }

    // MARK: Publishing

    /// Queues storing (and signalling) property values on the adapter object.
    func publish(_ adapter: SimulatedAdapter, _ changes: [String: [String: DBusValue]]) {
        let box = adapter.box
        let log = self.log
        for (interface, values) in changes.sorted(by: { $0.key < $1.key }) where !values.isEmpty {
            writer.enqueue { await box.set(interface, values, log: log) }
        }
    }

    /// Publishes ActiveInstances and SupportedInstances (free instances, as bluetoothd counts them).
    func publishInstances(_ adapter: SimulatedAdapter) {
        let used = adapter.advertisements.count
        let limit = configuration.supportedInstances
        publish(
            adapter,
            [
                SimulatedAdapter.advertisingInterface: [
                    "ActiveInstances": .byte(UInt8(clamping: used)),
                    "SupportedInstances": .byte(UInt8(clamping: max(0, limit - used))),
                ]
            ])
    }

    // MARK: Power

    /// Powered on: registered advertisements go back on the air.
    func powerUp(_ adapter: SimulatedAdapter) {
        adapter.appliedPowered = true
        updateDiscovery(adapter)
        // Active monitors resume their passive scan.
        if !adapter.discovering && adapter.listening { hearEverything(on: adapter) }
        for advertisement in adapter.activeAdvertisements { transmit(advertisement, from: adapter) }
    }

    /// Powered off, as bluetoothd does it: not discoverable, temporary devices
    /// removed, every discovery session and filter dropped, Discovering false.
    /// Advertisements stay registered; they are silent until power returns.
    func powerDown(_ adapter: SimulatedAdapter, publish publishPowered: Bool) {
        adapter.appliedPowered = false
        adapter.killedScanUntil = nil
        if flood?.adapter == adapter.name { stopFlood() }
        dropLinks(of: adapter)
        var values: [String: DBusValue] = [:]
        if adapter.switches.current.discoverable {
            adapter.switches.update { $0.discoverable = false }
            values["Discoverable"] = .boolean(false)
        }
        adapter.appliedDiscoverable = false
        adapter.discoveryMadeDiscoverable = false
        adapter.discoverableTimer?.cancel()
        if !values.isEmpty { publish(adapter, [SimulatedAdapter.adapterInterface: values]) }
        for device in Array(adapter.devices.values) { removeDevice(device, from: adapter) }
        adapter.clients.removeAll()
        updateDiscovery(adapter)
        if publishPowered {
            adapter.switches.update { $0.powered = false }
            publish(adapter, [SimulatedAdapter.adapterInterface: ["Powered": .boolean(false)]])
        }
        log.info("\(adapter.name): powered off")
    }

    // MARK: Properties.Set from peers

    /// Acts on a peer's Set, after the DBus module stored the value.
    func settingChanged(_ change: SettingChange) async {
        guard running, let adapter = adapters[change.adapter] else { return }
        let state = adapter.switches.current
        switch change.property {
        case "Powered":
            // Each Set in turn, by the value it set (bluetoothd finishes one
            // before the next): an off quickly followed by an on still powers
            // the controller down and up, and ends what power-off ends.
            let wanted = change.value.boolean ?? state.powered
            if wanted && !adapter.appliedPowered {
                log.info("\(adapter.name): powered on")
                powerUp(adapter)
            } else if !wanted && adapter.appliedPowered {
                powerDown(adapter, publish: false)
            }
        case "Discoverable":
            adapter.discoveryMadeDiscoverable = false
            discoverableChanged(adapter)
        case "DiscoverableTimeout":
            if state.discoverable { startDiscoverableTimer(adapter) }
        case "Alias":
            if case .string("") = change.value {
                adapter.switches.update { $0.alias = adapter.systemName }
                publish(adapter, [SimulatedAdapter.adapterInterface: ["Alias": .string(adapter.systemName)]])
            }
        default:
            break
        }
        await writer.flush()
    }

    /// Discoverable went on or off: restart its timer, and re-advertise, as
    /// the Flags of peripheral advertisements follow it.
    func discoverableChanged(_ adapter: SimulatedAdapter) {
        let discoverable = adapter.switches.current.discoverable
        guard discoverable != adapter.appliedDiscoverable else { return }
        adapter.appliedDiscoverable = discoverable
        if discoverable { startDiscoverableTimer(adapter) } else { adapter.discoverableTimer?.cancel() }
        for advertisement in adapter.activeAdvertisements { transmit(advertisement, from: adapter) }
    }

    func startDiscoverableTimer(_ adapter: SimulatedAdapter) {
        adapter.discoverableTimer?.cancel()
        let seconds = adapter.switches.current.discoverableTimeout
        guard seconds > 0 else { return }
        let name = adapter.name
        adapter.discoverableTimer = Task { [weak self] in
            try? await Task.sleep(for: .seconds(Int(seconds)))
            guard !Task.isCancelled else { return }
            await self?.discoverableTimedOut(name)
        }
    }

    func discoverableTimedOut(_ name: String) async {
        guard running, let adapter = adapters[name], adapter.switches.current.discoverable else { return }
        adapter.switches.update { $0.discoverable = false }
        publish(adapter, [SimulatedAdapter.adapterInterface: ["Discoverable": .boolean(false)]])
        discoverableChanged(adapter)
        await writer.flush()
    }
}

extension BluetoothDaemon {
    /// Adds an adapter and waits until the bus has seen it.
    func addAdapterAndWait(_ name: String) async {
        guard running else { return }
        addAdapter(name)
        await writer.flush()
    }
}
