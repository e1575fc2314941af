import DBus
import Foundation

/// A simulated BlueZ: an independent implementation of bluetoothd's D-Bus
/// API for the adapters, LE advertising and LE discovery, with a virtual air
/// between its adapters, so everything above BlueZ can be tested without a
/// radio.
///
/// It owns `org.bluez` on one connection (a `BluetoothDaemon`, replaced on
/// every restart) and `org.handoff.Simulator` on a second one, which serves
/// the fault-injection interface `org.handoff.Simulator1` at
/// `/org/handoff/Simulator` and stays while `org.bluez` is down.
///
///     var configuration = SimulatorConfiguration()
///     configuration.bus = .address(bus.address)
///     let simulator = try BlueZSimulator(configuration: configuration)
///     try await simulator.start()
///     …
///     await simulator.stop(graceful: true)
public actor BlueZSimulator {
    public static let controlBusName = "org.handoff.Simulator"
    public static let controlPath: DBusObjectPath = "/org/handoff/Simulator"
    public static let controlInterface = "org.handoff.Simulator1"

    public let configuration: SimulatorConfiguration
    let stats = SimulatorStats()
    let air: AirSettings
    let log: SimulatorLog

    private enum Phase { case idle, running, stopped }
    private var phase = Phase.idle
    private var daemon: BluetoothDaemon?
    private var control: DBusConnection?
    private var controlObject: DBusExportedObject?
    private var restartTask: Task<Void, Never>?
    /// Adapters whose controller went on scanning when bluetoothd was killed, and until when.
    private var killedScans: [String: ContinuousClock.Instant] = [:]
    private var stopWaiters: [CheckedContinuation<Void, Never>] = []
    /// What `StartFlood` sends (`SetFloodPayloads`); empty: the numbered pattern.
    private var floodPayloads: [[UInt8]] = []
    /// The adapters that exist (the "hardware"): they survive restarts.
    public private(set) var adapterNames: [String]

    /// - Throws: `SimulatorConfigurationError` for a value out of range.
    public init(configuration: SimulatorConfiguration) throws(SimulatorConfigurationError) {
        try configuration.validate()
        self.configuration = configuration
        air = AirSettings(dropRate: configuration.dropRate)
        log = SimulatorLog(sink: configuration.log)
        adapterNames = (0..<configuration.adapterCount).map { "hci\($0)" }
    }

    /// The bus address, as the ready line prints it.
    public nonisolated var busAddress: String {
        (try? configuration.bus.resolve(environment: ProcessInfo.processInfo.environment)) ?? "?"
    }

    /// True while `org.bluez` is up (false during a restart's downtime).
    public var isBlueZRunning: Bool { daemon != nil }

    // MARK: Starting and stopping

    /// Takes `org.bluez` with the adapters, then `org.handoff.Simulator`.
    /// - Throws: `DBusError`, for example when `org.bluez` is already owned.
    public func start() async throws {
        guard phase == .idle else { throw DBusError(.failed, "the simulator was already started") }
        phase = .running
        do {
            let daemon = try await startDaemon()
            // A stop (a signal) may have come while starting.
            guard phase == .running else { return await daemon.shutDown(graceful: true) }
            self.daemon = daemon
            let control = try await DBusConnection.connect(to: configuration.bus)
            guard phase == .running else { return await control.close() }
            self.control = control
            controlObject = try await control.export(Self.controlPath, interfaces: [makeControlInterface()])
            guard try await control.requestName(Self.controlBusName, flags: [.doNotQueue]) == .primaryOwner else {
                throw DBusError(.failed, "\(Self.controlBusName) is already owned by another process")
            }
            Task { [weak self] in
                await control.waitUntilClosed()
                await self?.controlClosed()
            }
        } catch {
            await stop(graceful: false)
            throw error
        }
    }

    private func startDaemon() async throws -> BluetoothDaemon {
        // Scans a killed bluetoothd left running, and not over yet.
        let now = ContinuousClock.now
        let lingering = killedScans.filter { $0.value > now && adapterNames.contains($0.key) }
        killedScans = [:]
        return try await BluetoothDaemon.start(
            configuration: configuration, adapterNames: adapterNames, stats: stats, air: air, killedScans: lingering)
    }

    /// Stops everything. `graceful` is bluetoothd's SIGTERM: adapters power
    /// down and every advertisement gets Release first.
    public func stop(graceful: Bool = true) async {
        guard phase != .stopped else { return }
        phase = .stopped
        restartTask?.cancel()
        restartTask = nil
        if let daemon {
            self.daemon = nil
            await daemon.shutDown(graceful: graceful)
        }
        if let control {
            self.control = nil
            await control.close()
        }
        controlObject = nil
        for waiter in stopWaiters { waiter.resume() }
        stopWaiters.removeAll()
    }

    /// Returns once `stop` has run (or the bus went away).
    public func waitUntilStopped() async {
        guard phase != .stopped else { return }
        await withCheckedContinuation { stopWaiters.append($0) }
    }

    private func controlClosed() async {
        guard phase == .running else { return }
        log.error("the bus closed the connection; stopping")
        await stop(graceful: false)
    }

    // MARK: Fault injection

    /// Drops off the bus like a stopped bluetoothd and comes back after
    /// `downtime` with fresh state, like a restarted one. Returns once
    /// `org.bluez` is gone.
    public func restart(downtime: Duration, graceful: Bool) async throws(DBusError) {
        guard phase == .running else { throw DBusError(.failed, "the simulator is not running") }
        guard let daemon else { throw DBusError(.failed, "org.bluez is already down, restarting") }
        self.daemon = nil
        stats.update { $0.restarts += 1 }
        log.info("restart: down for \(downtime)\(graceful ? ", gracefully" : "")")
        if !graceful && configuration.killedScanLinger > .zero {
            let until = ContinuousClock.now + configuration.killedScanLinger
            for name in await daemon.scanningAdapters() {
                killedScans[name] = until
                log.info("restart: \(name)'s controller goes on scanning for \(configuration.killedScanLinger)")
            }
        }
        await daemon.shutDown(graceful: graceful)
        await publishControlState()
        restartTask = Task { [weak self] in
            try? await Task.sleep(for: downtime)
            guard !Task.isCancelled else { return }
            await self?.comeBack()
        }
    }

    private func comeBack() async {
        guard phase == .running, daemon == nil else { return }
        restartTask = nil
        do {
            daemon = try await startDaemon()
            log.info("restart: org.bluez is back")
        } catch {
            log.error("restart failed: \(error)")
        }
        await publishControlState()
    }

    /// Unplugs an adapter: its advertisements get Release; InterfacesRemoved.
    public func removeAdapter(_ name: String) async throws(DBusError) {
        guard phase == .running else { throw DBusError(.failed, "the simulator is not running") }
        guard adapterNames.contains(name) else { throw DBusError(.invalidArgs, "no adapter \(name)") }
        adapterNames.removeAll { $0 == name }
        if let daemon { try await daemon.removeAdapter(name) }
        await publishControlState()
    }

    /// Plugs in an adapter `hciN`: InterfacesAdded, then it powers on.
    public func addAdapter(_ name: String) async throws(DBusError) {
        guard phase == .running else { throw DBusError(.failed, "the simulator is not running") }
        guard SimulatedAdapter.isValidName(name) else {
            throw DBusError(.invalidArgs, "adapter names are hci0, hci1, …; not '\(name)'")
        }
        guard !adapterNames.contains(name) else { throw DBusError(.failed, "\(name) already exists") }
        adapterNames.append(name)
        if let daemon { await daemon.addAdapterAndWait(name) }
        await publishControlState()
    }

    /// Loses `fraction` (0 … 1) of all air reports from now on.
    public func setDropRate(_ fraction: Double) async throws(DBusError) {
        guard (0...1).contains(fraction) else { throw DBusError(.invalidArgs, "the drop rate must be 0…1") }
        air.dropRate = fraction
        log.info("drop rate \(fraction)")
        await publishControlState()
    }

    /// See `org.handoff.Simulator1.StartFlood` in docs/simulator.md.
    public func startFlood(adapter: String, devices: UInt32, reportsPerSecond: UInt32, totalReports: UInt32)
        async throws(DBusError)
    {
        guard let daemon else { throw DBusError(.failed, "org.bluez is not running") }
        try await daemon.startFlood(
            on: adapter, devices: devices, rate: reportsPerSecond, total: UInt64(totalReports), payloads: floodPayloads)
    }

    /// See `org.handoff.Simulator1.SetFloodPayloads` in docs/simulator.md.
    public func setFloodPayloads(_ payloads: [[UInt8]]) throws(DBusError) {
        guard payloads.allSatisfy({ $0.count <= 255 }) else {
            throw DBusError(.invalidArgs, "a payload is at most 255 bytes")
        }
        floodPayloads = payloads
    }

    public func stopFlood() async throws(DBusError) {
        guard let daemon else { throw DBusError(.failed, "org.bluez is not running") }
        await daemon.stopFloodAndWait()
    }

    /// Counters since start, and what exists now.
    public func statistics() async -> [String: DBusValue] {
        let counters = stats.snapshot
        var result: [String: DBusValue] = [
            "ReportsDelivered": .uint64(counters.reportsDelivered),
            "ReportsDropped": .uint64(counters.reportsDropped),
            "FloodReportsSent": .uint64(counters.floodReportsSent),
            "AdvertisementsRegistered": .uint64(counters.advertisementsRegistered),
            "AdvertisementsReleased": .uint64(counters.advertisementsReleased),
            "DevicesAdded": .uint64(counters.devicesAdded),
            "DevicesRemoved": .uint64(counters.devicesRemoved),
            "Restarts": .uint32(counters.restarts),
            "Running": .boolean(daemon != nil),
            "DropRate": .double(air.dropRate),
        ]
        if let daemon {
            for (key, value) in await daemon.gauges() { result[key] = value }
        }
        return result
    }

    // MARK: The control interface

    private func publishControlState() async {
        guard let controlObject else { return }
        try? await controlObject.setProperties(
            of: Self.controlInterface,
            [
                "Running": .boolean(daemon != nil),
                "Adapters": .strings(adapterNames),
                "DropRate": .double(air.dropRate),
            ])
    }

    private func makeControlInterface() -> DBusInterface {
        DBusInterface(
            Self.controlInterface,
            methods: [
                DBusMethod("Restart", inputs: "ub", argumentNames: ["downtime_ms", "graceful"]) { [weak self] call in
                    guard case .uint32(let milliseconds) = call.body[0], case .boolean(let graceful) = call.body[1]
                    else { return [] }
                    try await self?.restart(downtime: .milliseconds(Int(milliseconds)), graceful: graceful)
                    return []
                },
                DBusMethod("RemoveAdapter", inputs: "s", argumentNames: ["name"]) { [weak self] call in
                    try await self?.removeAdapter(call.body[0].string ?? "")
                    return []
                },
                DBusMethod("AddAdapter", inputs: "s", argumentNames: ["name"]) { [weak self] call in
                    try await self?.addAdapter(call.body[0].string ?? "")
                    return []
                },
                DBusMethod("SetDropRate", inputs: "d", argumentNames: ["fraction"]) { [weak self] call in
                    guard case .double(let fraction) = call.body[0] else { return [] }
                    try await self?.setDropRate(fraction)
                    return []
                },
                DBusMethod(
                    "StartFlood", inputs: "suuu", argumentNames: ["adapter", "devices", "reportsPerSecond", "totalReports"]
                ) { [weak self] call in
                    guard case .string(let adapter) = call.body[0], case .uint32(let devices) = call.body[1],
                        case .uint32(let rate) = call.body[2], case .uint32(let total) = call.body[3]
                    else { return [] }
                    try await self?.startFlood(
                        adapter: adapter, devices: devices, reportsPerSecond: rate, totalReports: total)
                    return []
                },
                DBusMethod("SetFloodPayloads", inputs: "aay", argumentNames: ["payloads"]) { [weak self] call in
                    let payloads = call.body[0].arrayElements?.compactMap(\.bytes) ?? []
                    try await self?.setFloodPayloads(payloads)
                    return []
                },
                DBusMethod("StopFlood") { [weak self] _ in
                    try await self?.stopFlood()
                    return []
                },
                DBusMethod("GetStats", outputs: "a{sv}", argumentNames: ["stats"]) { [weak self] _ in
                    [.vardict(await self?.statistics() ?? [:])]
                },
            ],
            properties: [
                DBusProperty("Running", type: .boolean, value: .boolean(daemon != nil)),
                DBusProperty("Adapters", adapterNames),
                DBusProperty("DropRate", air.dropRate),
            ])
    }
}
