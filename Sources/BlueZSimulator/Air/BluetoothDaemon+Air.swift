import DBus

/// The virtual air between the adapters of one simulator: every powered
/// adapter's active advertisements reach every other powered adapter that is
/// discovering, as separate reports with a little latency, at the moments a
/// controller would report them (registration, update, scan start, rescan).
extension BluetoothDaemon {
    /// The report `advertisement` makes now, before RSSI is added.
    func report(of advertisement: RegisteredAdvertisement, from adapter: SimulatedAdapter) -> AirReport {
        let state = adapter.switches.current
        return AirReport(
            advertiser: adapter.name, address: advertisement.address, content: advertisement.content,
            adapterAlias: state.alias, adapterDiscoverable: state.discoverable,
            discoverableTimedOut: advertisement.discoverableTimedOut)
    }

    /// Sends one report of `advertisement` to every adapter scanning now.
    func transmit(_ advertisement: RegisteredAdvertisement, from adapter: SimulatedAdapter) {
        guard running, adapter.switches.powered, advertisement.state == .active, !advertisement.offAir else { return }
        advertiserHeard(advertisement, from: adapter)
        let report = report(of: advertisement, from: adapter)
        for name in adapterOrder where name != adapter.name {
            guard let scanner = adapters[name], scanner.listening else { continue }
            send(report, to: scanner.name)
        }
    }

    /// The scanner hears every other powered adapter's advertisements once.
    func hearEverything(on scanner: SimulatedAdapter) {
        for name in adapterOrder where name != scanner.name {
            guard let advertiser = adapters[name], advertiser.switches.powered else { continue }
            for advertisement in advertiser.activeAdvertisements where !advertisement.offAir {
                send(report(of: advertisement, from: advertiser), to: scanner.name)
            }
        }
    }

    /// Puts one report on the air: lost at the drop rate, otherwise heard
    /// after the air latency with a jittered RSSI.
    private func send(_ report: AirReport, to scanner: String) {
        let dropRate = air.dropRate
        if dropRate > 0 && Double.random(in: 0..<1, using: &random) < dropRate {
            stats.update { $0.reportsDropped += 1 }
            return
        }
        var report = report
        let jitter = configuration.rssiJitter
        report.rssi = configuration.rssi + (jitter > 0 ? Int16.random(in: -jitter...jitter, using: &random) : 0)
        report.rssi = min(20, max(-127, report.rssi))
        let delay = airLatency()
        let delivered = report
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.receive(delivered, on: scanner)
        }
    }

    // MARK: Hearing a report (bluetoothd's btd_adapter_update_found_device)

    func receive(_ report: AirReport, on name: String) async {
        guard running, let scanner = adapters[name], scanner.switches.powered, scanner.listening else { return }
        let merged = scanner.mergedFilter
        // Monitors see every report of the passive scan; without discovery only theirs go on.
        let monitors = monitors(of: scanner, matching: report)
        guard monitors.isEmpty ? passesDiscovery(report, on: scanner) : true else { return }
        stats.update { $0.reportsDelivered += 1 }

        // Without any filter, only discoverable advertisements create devices
        // (bluetoothd's FilterDiscoverable); a Pattern decides on its own.
        var discoverable =
            !monitors.isEmpty || merged.filtered
            || report.flags & (AdvertisementContent.flagGeneral | AdvertisementContent.flagLimited) != 0
        for pattern in merged.patterns where monitors.isEmpty {
            discoverable = false
            if pattern.isEmpty || report.address.description.hasPrefix(pattern)
                || (report.name.map { $0.hasPrefix(pattern) } ?? false)
            {
                discoverable = true
                break
            }
        }

        guard let device = scanner.devices[report.address] else {
            if discoverable { monitorsFound(addDevice(report, to: scanner), monitors) }
            return
        }
        device.connectable = report.connectable
        startTemporaryTimer(device, on: scanner)
        guard discoverable else { return }
        update(device, with: report, merged: merged)
        monitorsFound(device, monitors)
    }

    /// What the kernel's service-discovery filter lets through, while discovering.
    private func passesDiscovery(_ report: AirReport, on scanner: SimulatedAdapter) -> Bool {
        let merged = scanner.mergedFilter
        guard scanner.discovering, merged.transport.contains(.le) else { return false }
        if merged.filtered {
            if let threshold = merged.rssi, report.rssi < threshold { return false }
            if !merged.uuids.isEmpty && merged.uuids.isDisjoint(with: report.uuids) { return false }
        }
        return true
    }

    @discardableResult
    private func addDevice(_ report: AirReport, to scanner: SimulatedAdapter) -> RemoteDevice {
        let device = RemoteDevice(address: report.address, adapterPath: scanner.path)
        device.absorbFirst(report)
        scanner.devices[report.address] = device
        export(device)
        startTemporaryTimer(device, on: scanner)
        log.info("\(scanner.name): new device \(report.address) (from \(report.advertiser))")
        return device
    }

    /// Exports a device object: InterfacesAdded with its first values.
    func export(_ device: RemoteDevice) {
        let interface = device.makeInterface(methods: deviceMethods(for: device))
        let box = device.box
        let path = device.path
        let connection = self.connection
        let log = self.log
        writer.enqueue { await box.export(path, interfaces: [interface], on: connection, log: log) }
        stats.update { $0.devicesAdded += 1 }
    }

    /// Applies a report to a known device, and emits one PropertiesChanged with
    /// what bluetoothd would emit for it.
    private func update(_ device: RemoteDevice, with report: AirReport, merged: MergedDiscoveryFilter) {
        var changed: [String: DBusValue] = [:]
        // RSSI: every change with a filter, else only moves of 8 dB or more.
        if let value = rssiUpdate(device, report.rssi, filtered: merged.filtered) { changed["RSSI"] = value }
        if let power = report.txPower, device.txPower != power {
            device.txPower = power
            changed["TxPower"] = .int16(power)
        }
        if let appearance = report.appearance, device.appearance != appearance {
            device.appearance = appearance
            changed["Appearance"] = .uint16(appearance)
        }
        var aliasChanged = false
        if let name = report.name, report.nameComplete || device.name == nil, device.name != name {
            device.name = name
            changed["Name"] = .string(name)
            aliasChanged = true
        }
        let added = report.uuids.filter { !device.uuids.contains($0) }
        if !added.isEmpty {
            device.uuids += added
            changed["UUIDs"] = .strings(device.uuids)
        }
        if !report.manufacturerData.isEmpty {
            if merged.duplicateData {
                // bluetoothd clears the cache and adds the report's entries: a signal every time.
                device.manufacturerData = report.manufacturerData
                changed["ManufacturerData"] = device.manufacturerDataValue
            } else if merge(report.manufacturerData, into: &device.manufacturerData, key: \.company) {
                changed["ManufacturerData"] = device.manufacturerDataValue
            }
        }
        if !report.serviceData.isEmpty {
            if merged.duplicateData {
                device.serviceData = report.serviceData
                changed["ServiceData"] = device.serviceDataValue
            } else if merge(report.serviceData, into: &device.serviceData, key: \.uuid) {
                changed["ServiceData"] = device.serviceDataValue
            }
        }
        if device.flags != report.flags {
            device.flags = report.flags
            changed["AdvertisingFlags"] = .bytes([report.flags])
        }
        emitDeviceChanges(device, changed)
        if aliasChanged {
            let box = device.box
            let alias = device.alias
            let log = self.log
            writer.enqueue { await box.set(RemoteDevice.interface, ["Alias": .string(alias)], log: log) }
        }
    }

    /// bluetoothd's `device_set_rssi_with_delta`: the new value, or nil when no signal is due.
    private func rssiUpdate(_ device: RemoteDevice, _ rssi: Int16, filtered: Bool) -> DBusValue? {
        if let old = device.rssi {
            if filtered ? old == rssi : abs(Int(old) - Int(rssi)) < 8 { return nil }
        }
        device.rssi = rssi
        return .int16(rssi)
    }

    /// Adds or replaces entries by key; true when anything changed.
    private func merge<Entry: Equatable, Key: Equatable>(
        _ entries: [Entry], into cache: inout [Entry], key: KeyPath<Entry, Key>
    ) -> Bool {
        var changed = false
        for entry in entries {
            if let index = cache.firstIndex(where: { $0[keyPath: key] == entry[keyPath: key] }) {
                if cache[index] != entry {
                    cache[index] = entry
                    changed = true
                }
            } else {
                cache.append(entry)
                changed = true
            }
        }
        return changed
    }

    /// Stores report-driven values and emits their PropertiesChanged, exactly
    /// once, with bluetoothd's shape: `(s "org.bluez.Device1", a{sv}, as)`.
    func emitDeviceChanges(_ device: RemoteDevice, _ changed: [String: DBusValue], invalidated: [String] = []) {
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        let box = device.box
        let path = device.path
        let storable = device.storable(changed)
        let connection = self.connection
        let log = self.log
        writer.enqueue {
            await box.set(RemoteDevice.interface, storable, log: log)
            do {
                try connection.emitSignal(
                    path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                    [.string(RemoteDevice.interface), .vardict(changed), .strings(invalidated)])
            } catch {
                log.error("cannot emit PropertiesChanged on \(path): \(error)")
            }
        }
    }

    // MARK: Temporary devices

    /// (Re)starts the device's TemporaryTimeout, as every report does.
    func startTemporaryTimer(_ device: RemoteDevice, on scanner: SimulatedAdapter) {
        device.temporaryTimer?.cancel()
        guard device.temporary else { return }
        device.temporaryGeneration += 1
        let generation = device.temporaryGeneration
        let name = scanner.name
        let address = device.address
        let timeout = configuration.temporaryTimeout
        device.temporaryTimer = Task { [weak self] in
            try? await Task.sleep(for: timeout)
            guard !Task.isCancelled else { return }
            await self?.temporaryTimeoutFired(on: name, address: address, generation: generation)
        }
    }

    func temporaryTimeoutFired(on name: String, address: DeviceAddress, generation: UInt64) async {
        guard running, let scanner = adapters[name], let device = scanner.devices[address],
            device.temporaryGeneration == generation, device.temporary, gatt.link(of: device) == nil
        else { return }
        log.info("\(name): device \(address) not seen for \(configuration.temporaryTimeout); removed")
        if device.isFlood { flood?.devices.removeAll { $0 == address } }
        removeDevice(device, from: scanner)
        await writer.flush()
    }

    /// Removes a device object (InterfacesRemoved).
    func removeDevice(_ device: RemoteDevice, from scanner: SimulatedAdapter) {
        device.temporaryTimer?.cancel()
        device.temporaryTimer = nil
        guard scanner.devices.removeValue(forKey: device.address) != nil else { return }
        monitorsLost(device, on: scanner)
        forgetGatt(of: device)
        let box = device.box
        writer.enqueue { await box.unexport() }
        stats.update { $0.devicesRemoved += 1 }
    }
}
