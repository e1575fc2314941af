import DBus

extension BluetoothDaemon {
    // MARK: Adapter1 methods

    /// StartDiscovery: one session per client (InProgress on a second).
    func startDiscovery(on name: String, sender: String) async throws(DBusError) {
        let adapter = try self.adapter(name)
        guard adapter.switches.powered else { throw BlueZError.notReady() }
        if adapter.killedScanLingers && !adapter.discovering {
            // bluetoothd holds the reply until the kernel answers; the kernel says
            // Busy, and bluetoothd answers InProgress (as for a second session)
            // and drops the session, keeping a pre-set filter.
            if let client = adapter.clients[sender], client.filter != nil {
                adapter.clients[sender]?.discovering = false
            } else {
                adapter.clients[sender] = nil
            }
            log.info("\(name): StartDiscovery from \(sender) refused: the kernel still scans for the killed bluetoothd (Busy)")
            throw BlueZError.inProgress()
        }
        if let client = adapter.clients[sender] {
            if client.discovering { throw BlueZError.inProgress() }
            adapter.clients[sender]?.discovering = true
        } else {
            adapter.clients[sender] = DiscoveryClient(owner: sender, filter: nil, discovering: true)
            watchClient(sender)
        }
        log.info("\(name): StartDiscovery from \(sender)")
        updateDiscovery(adapter)
        await writer.flush()
    }

    /// StopDiscovery releases the client's session; its filter stays for a later StartDiscovery.
    func stopDiscovery(on name: String, sender: String) async throws(DBusError) {
        let adapter = try self.adapter(name)
        guard adapter.switches.powered else { throw BlueZError.notReady() }
        guard let client = adapter.clients[sender], client.discovering else {
            throw BlueZError.failed("No discovery started")
        }
        if client.filter == nil {
            adapter.clients[sender] = nil
        } else {
            adapter.clients[sender]?.discovering = false
        }
        log.info("\(name): StopDiscovery from \(sender)")
        updateDiscovery(adapter)
        await writer.flush()
    }

    /// SetDiscoveryFilter: checked like bluetoothd; an empty dictionary clears the client's filter.
    func setDiscoveryFilter(on name: String, sender: String, _ entries: [(key: DBusValue, value: DBusValue)])
        async throws(DBusError)
    {
        let adapter = try self.adapter(name)
        guard adapter.switches.powered else { throw BlueZError.notReady() }
        let filter = try DiscoveryFilter.parse(entries)
        if var client = adapter.clients[sender] {
            client.filter = filter
            adapter.clients[sender] = (filter == nil && !client.discovering) ? nil : client
        } else if let filter {
            adapter.clients[sender] = DiscoveryClient(owner: sender, filter: filter, discovering: false)
            watchClient(sender)
        }
        log.info("\(name): SetDiscoveryFilter from \(sender): \(filter.map { "\($0)" } ?? "cleared")")
        updateDiscovery(adapter)
        await writer.flush()
    }

    /// RemoveDevice drops a device object and what bluetoothd knew of it.
    func removeDevice(on name: String, path: DBusObjectPath, sender: String) async throws(DBusError) {
        let adapter = try self.adapter(name)
        guard let device = adapter.devices.values.first(where: { $0.path == path }) else {
            throw BlueZError.doesNotExist()
        }
        log.info("\(name): RemoveDevice \(device.address) from \(sender)")
        guard adapter.switches.powered else { throw BlueZError.notReady() }
        if device.isFlood { flood?.devices.removeAll { $0 == device.address } }
        dropLink(of: device)
        removeDevice(device, from: adapter)
        await writer.flush()
    }

    // MARK: Discovery state

    /// Brings Discovering, the merged filter, the rescan timer and the
    /// filter's Discoverable wish in line with the adapter's clients.
    func updateDiscovery(_ adapter: SimulatedAdapter) {
        let scanning = adapter.switches.powered && adapter.hasDiscoverySession
        let merged = scanning ? MergedDiscoveryFilter(adapter.discoveringFilters) : MergedDiscoveryFilter()
        let previous = adapter.mergedFilter
        adapter.mergedFilter = merged
        if scanning && !adapter.discovering {
            adapter.discovering = true
            publish(adapter, [SimulatedAdapter.adapterInterface: ["Discovering": .boolean(true)]])
            startRescanTimer(adapter)
            hearEverything(on: adapter)
        } else if scanning && merged != previous {
            // bluetoothd restarts the scan with the new kernel filter.
            startRescanTimer(adapter)
            hearEverything(on: adapter)
        } else if !scanning && adapter.discovering {
            adapter.discovering = false
            adapter.rescanTimer?.cancel()
            adapter.rescanTimer = nil
            publish(adapter, [SimulatedAdapter.adapterInterface: ["Discovering": .boolean(false)]])
            discoveryCleanup(adapter)
            resumeAdvertising(on: adapter)
            discoveryRoundEnded(on: adapter.name)
        }
        // A filter's Discoverable makes the adapter discoverable while it discovers.
        let state = adapter.switches.current
        if scanning && merged.discoverable && !state.discoverable {
            adapter.switches.update { $0.discoverable = true }
            adapter.discoveryMadeDiscoverable = true
            publish(adapter, [SimulatedAdapter.adapterInterface: ["Discoverable": .boolean(true)]])
            discoverableChanged(adapter)
        } else if adapter.discoveryMadeDiscoverable && !(scanning && merged.discoverable) {
            adapter.discoveryMadeDiscoverable = false
            adapter.switches.update { $0.discoverable = false }
            publish(adapter, [SimulatedAdapter.adapterInterface: ["Discoverable": .boolean(false)]])
            discoverableChanged(adapter)
        }
    }

    /// The last session ended (bluetoothd's `discovery_cleanup`): temporary
    /// devices that are not connectable go at once; the others lose RSSI and
    /// TxPower and stay until TemporaryTimeout.
    func discoveryCleanup(_ adapter: SimulatedAdapter) {
        for device in Array(adapter.devices.values) where device.temporary {
            // A device an active monitor reported stays until TemporaryTimeout.
            if !device.connectable && !adapter.monitors.contains(where: { $0.found.contains(device.address) }) {
                removeDevice(device, from: adapter)
                continue
            }
            var invalidated: [String] = []
            if device.rssi != nil {
                device.rssi = nil
                invalidated.append("RSSI")
            }
            if device.txPower != nil {
                device.txPower = nil
                invalidated.append("TxPower")
            }
            if !invalidated.isEmpty { emitDeviceChanges(device, [:], invalidated: invalidated) }
        }
    }

    /// Every `rescanInterval` while discovering, the adapter hears every
    /// advertisement again, as bluetoothd restarting its LE scan makes the
    /// controller report everything once more.
    func startRescanTimer(_ adapter: SimulatedAdapter) {
        adapter.rescanTimer?.cancel()
        let name = adapter.name
        let interval = configuration.rescanInterval
        adapter.rescanTimer = Task { [weak self] in
            while !Task.isCancelled {
                try? await Task.sleep(for: interval)
                guard !Task.isCancelled, let self else { return }
                await self.rescan(name)
            }
        }
    }

    func rescan(_ name: String) {
        guard running, let adapter = adapters[name], adapter.discovering else { return }
        discoveryRoundEnded(on: name)
        hearEverything(on: adapter)
    }
}
