import DBus

/// One run of the simulated bluetoothd: it owns `org.bluez` on its own
/// connection, from start until it stops (a restart makes a new one, so all
/// state starts fresh, as after a real bluetoothd restart).
///
/// All state is confined to this actor. Changes to the bus go through
/// `writer`, in the order the actor makes them; method handlers flush it
/// before replying, so a peer that reads a property after a reply sees the
/// new value.
actor BluetoothDaemon {
    static let busName = "org.bluez"
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
    static let advertisementInterface = "org.bluez.LEAdvertisement1"

    /// A peer's `Properties.Set` on an adapter, passed on by its validator.
    struct SettingChange: Sendable {
        var adapter: String
        var property: String
        var value: DBusValue
    }

    let configuration: SimulatorConfiguration
    let connection: DBusConnection
    let writer = BusWriter()
    let stats: SimulatorStats
    let air: AirSettings
    let log: SimulatorLog

    var adapters: [String: SimulatedAdapter] = [:]
    /// Adapter names in the order they were added.
    var adapterOrder: [String] = []
    /// False once shutting down: method calls then fail and timers do nothing.
    var running = true
    var nextID: UInt64 = 1
    var random = SystemRandomNumberGenerator()
    var flood: FloodRun?
    /// GATT applications, LE links and remote GATT objects (BluetoothDaemon+Gatt*.swift).
    let gatt = GattState()
    private var background: [Task<Void, Never>] = []
    let settingChanges: AsyncStream<SettingChange>.Continuation
    private let settingStream: AsyncStream<SettingChange>

    private init(
        configuration: SimulatorConfiguration, connection: DBusConnection, stats: SimulatorStats, air: AirSettings
    ) {
        self.configuration = configuration
        self.connection = connection
        self.stats = stats
        self.air = air
        gatt.stalledDiscoveriesLeft = configuration.stalledDiscoveries
        log = SimulatorLog(sink: configuration.log)
        (settingStream, settingChanges) = AsyncStream<SettingChange>.makeStream()
    }

    /// Connects, takes `org.bluez`, and brings up `adapterNames` (each appears
    /// unpowered, then powers on, as bluetoothd's AutoEnable does).
    /// - Throws: `DBusError`; `Failed` when another process owns `org.bluez`.
    /// `killedScans`: adapters whose controller still runs the scan of a killed bluetoothd, and until when.
    static func start(
        configuration: SimulatorConfiguration, adapterNames: [String], stats: SimulatorStats, air: AirSettings,
        killedScans: [String: ContinuousClock.Instant] = [:]
    ) async throws -> BluetoothDaemon {
        let connection = try await DBusConnection.connect(to: configuration.bus)
        let daemon = BluetoothDaemon(configuration: configuration, connection: connection, stats: stats, air: air)
        do {
            try await daemon.bringUp(adapterNames, killedScans: killedScans)
        } catch {
            await connection.close()
            throw error
        }
        return daemon
    }

    private func bringUp(_ adapterNames: [String], killedScans: [String: ContinuousClock.Instant]) async throws {
        try await connection.addObjectManager(at: .root)
        let departures = try await connection.signals(
            matching: DBusMatchRule(
                sender: DBusConnection.busName, interface: DBusConnection.busInterface, member: "NameOwnerChanged",
                path: DBusConnection.busPath))
        let reply = try await connection.requestName(Self.busName, flags: [.doNotQueue])
        guard reply == .primaryOwner || reply == .alreadyOwner else {
            throw DBusError(.failed, "\(Self.busName) is already owned by another process")
        }
        background.append(
            Task { [weak self] in
                do {
                    for try await message in departures {
                        guard message.body.count == 3, case .string(let name) = message.body[0],
                            case .string(let newOwner) = message.body[2], name.hasPrefix(":"), newOwner.isEmpty
                        else { continue }
                        await self?.clientVanished(name)
                    }
                } catch {}
            })
        let changes = settingStream
        background.append(
            Task { [weak self] in
                for await change in changes { await self?.settingChanged(change) }
            })
        log.info("\(Self.busName) is \(connection.uniqueName)")
        for name in adapterNames { addAdapter(name, killedScanUntil: killedScans[name]) }
        await writer.flush()
    }

    /// Stops: a graceful stop first powers the adapters down and calls
    /// Release on every advertisement and monitor, as bluetoothd does on SIGTERM; then the
    /// connection closes and `org.bluez` disappears.
    func shutDown(graceful: Bool) async {
        guard running else { return }
        if graceful {
            stopFlood()
            for name in adapterOrder {
                guard let adapter = adapters[name] else { continue }
                if adapter.appliedPowered { powerDown(adapter, publish: true) }
            }
            for name in adapterOrder {
                guard let adapter = adapters[name] else { continue }
                for advertisement in adapter.advertisements where advertisement.state == .active {
                    release(advertisement)
                }
                dropMonitors(of: adapter) { _ in true }
            }
        }
        running = false
        stopFlood()
        for adapter in adapters.values { stopTimers(of: adapter) }
        await writer.flush()
        // Closing drops what libdbus has not written yet: a round trip to the bus
        // first makes sure the Release calls and signals are out.
        _ = try? await connection.nameOwner(of: DBusConnection.busName)
        await connection.close()
        await writer.finish()
        settingChanges.finish()
        for task in background { task.cancel() }
        background.removeAll()
        log.info("\(Self.busName) stopped\(graceful ? " gracefully" : "")")
    }

    func stopTimers(of adapter: SimulatedAdapter) {
        adapter.rescanTimer?.cancel()
        adapter.discoverableTimer?.cancel()
        for advertisement in adapter.advertisements { advertisement.stop() }
        for device in adapter.devices.values { device.temporaryTimer?.cancel() }
    }

    func makeID() -> UInt64 {
        defer { nextID += 1 }
        return nextID
    }

    /// Fails a method call that arrives while stopping.
    func ensureRunning() throws(DBusError) {
        guard running else { throw BlueZError.failed("bluetoothd is shutting down") }
    }

    func adapter(_ name: String) throws(DBusError) -> SimulatedAdapter {
        try ensureRunning()
        guard let adapter = adapters[name] else {
            throw DBusError(.unknownObject, "no adapter \(name)")
        }
        return adapter
    }

    // MARK: Clients leaving

    /// A client left the bus: its discovery sessions, filters,
    /// advertisements and monitors go, without Release (bluetoothd's disconnect watches).
    func clientVanished(_ owner: String) async {
        guard running else { return }
        var changed = false
        for name in adapterOrder {
            guard let adapter = adapters[name] else { continue }
            if adapter.clients.removeValue(forKey: owner) != nil {
                log.info("\(name): discovery client \(owner) left")
                updateDiscovery(adapter)
                changed = true
            }
            if adapter.monitorApplications.contains(where: { $0.owner == owner }) {
                log.info("\(name): monitors of \(owner) dropped: client left")
                dropMonitors(of: adapter, release: false) { $0.owner == owner }
            }
            let gone = adapter.advertisements.filter { $0.owner == owner }
            for advertisement in gone {
                log.info("\(name): advertisement \(advertisement.path) of \(owner) dropped: client left")
                remove(advertisement, from: adapter)
                changed = true
            }
        }
        if gattClientVanished(owner) { changed = true }
        if changed { await writer.flush() }
    }

    /// Makes sure a client that is already gone is noticed: the departure
    /// signal may have come before the client was known.
    func watchClient(_ owner: String) {
        let connection = self.connection
        Task { [weak self] in
            if (try? await connection.nameOwner(of: owner)) == .some(nil) {
                await self?.clientVanished(owner)
            }
        }
    }
}
