import DBus

/// LE connections between the simulated adapters: `Device1.Connect` and
/// `Disconnect`, as bluetoothd 5.66 and the kernel do them on btvirt.
///
/// Connect succeeds once the device's address is heard advertising
/// connectably (Type "peripheral") from another powered adapter; until then it
/// waits, as the kernel's passive-scan connection does: a "broadcast"
/// advertisement never answers, and on the rig Connect to one got no reply in
/// 90 s (the simulator can give up after `connectTimeout` instead). Connect
/// keeps the device from expiring while connected, replies once the link is up,
/// and ServicesResolved follows when both ends have discovered each other's
/// GATT database. The advertiser's bluetoothd gets a Device1 for the central,
/// by the central adapter's public address. After the link drops both Device1
/// objects are temporary again and expire after TemporaryTimeout.
extension BluetoothDaemon {
    static let deviceInterface = "org.bluez.Device1"

    /// The methods of a simulated Device1.
    func deviceMethods(for device: RemoteDevice) -> [DBusMethod] {
        let path = device.path
        let adapterName = device.adapterPath.elements.last.map(String.init) ?? ""
        return [
            DBusMethod("Connect") { [weak self] _ in
                guard let self else { throw BlueZError.failed("bluetoothd is shutting down") }
                try await self.connect(path, on: adapterName)
                return []
            },
            DBusMethod("Disconnect") { [weak self] _ in
                await self?.disconnect(path, on: adapterName)
                return []
            },
            DBusMethod("Pair") { _ in throw BlueZError.notSupported("the simulator does not model pairing") },
            DBusMethod("CancelPairing") { _ in throw BlueZError.doesNotExist() },
        ]
    }

    // MARK: Connect

    func connect(_ path: DBusObjectPath, on adapterName: String) async throws(DBusError) {
        let adapter = try self.adapter(adapterName)
        guard let device = adapter.devices.values.first(where: { $0.path == path }) else {
            throw BlueZError.doesNotExist()
        }
        guard adapter.switches.powered else { throw BlueZError.notReady() }
        if let link = gatt.link(of: device) {
            // Connected (or disconnecting) already: bluetoothd answers at once.
            guard link.state == .connecting else { return }
            throw BlueZError.failed("Operation already in progress")
        }
        device.temporary = false
        device.temporaryTimer?.cancel()
        let link = LELink(id: makeID(), central: adapterName, centralDevice: device, mtu: configuration.attMTU)
        gatt.links.append(link)
        log.info("\(adapterName): Connect \(device.address)")
        let id = link.id
        if let timeout = configuration.connectTimeout {
            link.timeout = Task { [weak self] in
                try? await Task.sleep(for: timeout)
                guard !Task.isCancelled else { return }
                await self?.connectTimedOut(id)
            }
        }
        let result = await withCheckedContinuation { continuation in
            link.waiters.append(continuation)
            findAdvertiser(for: link)
        }
        try result.get()
        await writer.flush()
    }

    /// The connection attempt ran out of `connectTimeout` (a simulator option:
    /// bluetoothd 5.66 itself keeps waiting): no connectable advertisement came.
    func connectTimedOut(_ id: UInt64) async {
        guard let link = gatt.links.first(where: { $0.id == id }), link.state == .connecting else { return }
        log.info("\(link.central): Connect \(link.centralDevice.address) failed: no connectable advertisement")
        abandon(link, BlueZError.failed(Self.connectTimeoutMessage))
        await writer.flush()
    }

    /// What Connect says when `connectTimeout` runs out: what bluetoothd reports
    /// for an LE connection attempt the kernel aborted.
    static let connectTimeoutMessage = "le-connection-abort-by-local"

    /// An advertisement was transmitted: a pending Connect to its address may proceed.
    func advertiserHeard(_ advertisement: RegisteredAdvertisement, from adapter: SimulatedAdapter) {
        guard advertisement.content.kind == .peripheral else { return }
        for link in gatt.links where link.state == .connecting && link.peripheral == nil {
            if link.central != adapter.name && link.centralDevice.address == advertisement.address {
                establish(link, with: adapter.name)
            }
        }
    }

    /// Looks for a powered adapter advertising the device's address connectably now.
    private func findAdvertiser(for link: LELink) {
        for name in adapterOrder where name != link.central {
            guard let candidate = adapters[name], candidate.switches.powered else { continue }
            if candidate.activeAdvertisements.contains(where: {
                $0.address == link.centralDevice.address && $0.content.kind == .peripheral
            }) {
                establish(link, with: name)
                return
            }
        }
    }

    /// The advertiser answered: the link comes up after the air latency, but
    /// only once the central is not discovering. The kernel starts an LE
    /// connection when no discovery runs, so with discovery on it waits for the
    /// end of the LE discovery round (here the next rescan, or the last
    /// StopDiscovery); seen on the VM rig.
    private func establish(_ link: LELink, with peripheral: String) {
        link.peripheral = peripheral
        if adapters[link.central]?.discovering == true {
            link.waitsForDiscoveryEnd = true
            log.info("\(link.central): Connect \(link.centralDevice.address) waits for the discovery round to end")
            return
        }
        scheduleLinkUp(link)
    }

    /// The central's discovery round ended (a rescan) or discovery stopped:
    /// connections that waited for it start.
    func discoveryRoundEnded(on adapter: String) {
        for link in gatt.links where link.central == adapter && link.waitsForDiscoveryEnd && link.state == .connecting {
            link.waitsForDiscoveryEnd = false
            scheduleLinkUp(link)
        }
    }

    private func scheduleLinkUp(_ link: LELink) {
        let id = link.id
        let delay = configuration.latency.lowerBound
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.linkUp(id)
        }
    }

    func linkUp(_ id: UInt64) async {
        guard running, let link = gatt.links.first(where: { $0.id == id }), link.state == .connecting,
            let peripheralName = link.peripheral, let peripheral = adapters[peripheralName],
            let central = adapters[link.central], peripheral.switches.powered, central.switches.powered
        else { return }
        link.timeout?.cancel()
        link.state = .connected
        link.bearers = (0..<configuration.attChannels).map { _ in ATTBearer() }
        // The advertiser's bluetoothd makes (or reuses) a Device1 for the central.
        let remote: RemoteDevice
        if let known = peripheral.devices[central.address] {
            remote = known
            remote.temporaryTimer?.cancel()
        } else {
            remote = RemoteDevice(address: central.address, adapterPath: peripheral.path)
            remote.addressType = "public"
            peripheral.devices[central.address] = remote
            export(remote)
        }
        link.peripheralDevice = remote
        publishConnection(link.centralDevice, connected: true)
        publishConnection(remote, connected: true)
        log.info("\(link.central): connected to \(link.centralDevice.address) (\(peripheralName)), MTU \(link.mtu)")
        link.resolve(.success(()))
        if gatt.stalledDiscoveriesLeft > 0 {
            gatt.stalledDiscoveriesLeft -= 1
            log.info("\(link.central): GATT discovery with \(link.centralDevice.address) stalls (stalled discoveries)")
            await writer.flush()
            return
        }
        // GATT discovery on both ends, then ServicesResolved.
        let delay = configuration.latency.upperBound
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.servicesDiscovered(id)
        }
        await writer.flush()
    }

    private func publishConnection(_ device: RemoteDevice, connected: Bool) {
        let box = device.box
        let log = self.log
        writer.enqueue { await box.set(Self.deviceInterface, ["Connected": .boolean(connected)], log: log) }
    }

    /// Both ends have read each other's database: export the remote objects,
    /// restore notification sessions, and set ServicesResolved.
    func servicesDiscovered(_ id: UInt64) async {
        guard running, let link = gatt.links.first(where: { $0.id == id }), link.state == .connected else { return }
        for adapter in [link.central, link.peripheral].compactMap({ $0 }) {
            guard let device = link.device(on: adapter) else { continue }
            let box = device.box
            let log = self.log
            if configuration.servicesResolvedFirst {
                writer.enqueue { await box.set(Self.deviceInterface, ["ServicesResolved": .boolean(true)], log: log) }
                refreshView(of: device, link: link)
            } else {
                refreshView(of: device, link: link)
                writer.enqueue { await box.set(Self.deviceInterface, ["ServicesResolved": .boolean(true)], log: log) }
            }
        }
        await writer.flush()
    }

    /// A connection attempt ends without a link: Connect fails with `error` and
    /// the device is temporary again.
    private func abandon(_ link: LELink, _ error: DBusError) {
        gatt.links.removeAll { $0 === link }
        link.timeout?.cancel()
        let device = link.centralDevice
        device.temporary = true
        if let scanner = adapters[link.central], scanner.devices[device.address] === device {
            startTemporaryTimer(device, on: scanner)
        }
        link.resolve(.failure(error))
    }

    // MARK: Disconnect

    /// Disconnect: cancels a pending Connect at once; drops a link after
    /// `disconnectDelay` (bluetoothd's DISCONNECT_TIMER) and replies then; a
    /// device that is not connected gets an empty reply.
    func disconnect(_ path: DBusObjectPath, on adapterName: String) async {
        guard running, let adapter = adapters[adapterName],
            let device = adapter.devices.values.first(where: { $0.path == path }),
            let link = gatt.link(of: device)
        else { return }
        switch link.state {
        case .connecting:
            log.info("\(adapterName): Connect \(device.address) cancelled by Disconnect")
            abandon(link, BlueZError.failed("br-connection-canceled"))
            return
        case .connected:
            link.state = .disconnecting
            log.info("\(adapterName): Disconnect \(device.address)")
            let id = link.id
            let delay = configuration.disconnectDelay
            Task { [weak self] in
                try? await Task.sleep(for: delay)
                await self?.disconnectTimerFired(id)
            }
        case .disconnecting:
            break
        }
        await withCheckedContinuation { continuation in link.disconnectWaiters.append(continuation) }
    }

    func disconnectTimerFired(_ id: UInt64) async {
        guard let link = gatt.links.first(where: { $0.id == id }) else { return }
        tearDown(link)
        await writer.flush()
        link.dropped()
    }

    /// Drops the link `device` is an end of, at once (RemoveDevice, device gone).
    func dropLink(of device: RemoteDevice) {
        guard let link = gatt.link(of: device) else { return }
        tearDown(link)
        link.dropped()
    }

    /// Drops every link of an adapter that is powering off or going away.
    func dropLinks(of adapter: SimulatedAdapter) {
        for link in gatt.links where link.central == adapter.name || link.peripheral == adapter.name {
            tearDown(link)
            link.dropped()
        }
    }

    /// The link is gone: notifications stop (the application gets StopNotify when
    /// no device is left subscribed), both Device1 objects show ServicesResolved
    /// and Connected false, a pending Connect fails. The remote GATT objects stay.
    func tearDown(_ link: LELink) {
        if link.state == .connecting {
            abandon(link, BlueZError.failed("br-connection-canceled"))
            return
        }
        gatt.links.removeAll { $0 === link }
        link.timeout?.cancel()
        link.state = .disconnecting
        for bearer in link.bearers { bearer.close() }
        link.bearers.removeAll()
        for adapter in [link.central, link.peripheral].compactMap({ $0 }) {
            guard let device = link.device(on: adapter) else { continue }
            if let view = gatt.views[device.path] {
                for characteristic in view.characteristics { unsubscribe(characteristic) }
            }
            let box = device.box
            let log = self.log
            writer.enqueue {
                await box.set(Self.deviceInterface, ["ServicesResolved": .boolean(false)], log: log)
                await box.set(Self.deviceInterface, ["Connected": .boolean(false)], log: log)
            }
            // Not bonded: temporary again, gone after TemporaryTimeout (with its GATT objects).
            device.temporary = true
            if let scanner = adapters[adapter], scanner.devices[device.address] === device {
                startTemporaryTimer(device, on: scanner)
            }
        }
        log.info("\(link.central): link to \(link.centralDevice.address) down")
    }
}
