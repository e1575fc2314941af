import DBus
import Logging

/// Scanning and advertising on one adapter that survive bluetoothd restarts,
/// adapters coming and going, and power cycles, without help.
///
/// `run()` reconciles what is wanted with what bluetoothd has: it picks the
/// adapter, powers it on when allowed, keeps the advertisement (if one is
/// wanted) registered with the wanted data, then sets the discovery filter
/// (LE, DuplicateData) and starts discovery. Every change in bluetoothd's
/// object tree triggers a new pass, so after bluetoothd comes back everything
/// is set up again as soon as its objects appear. A pass that fails is retried
/// with backoff; nothing is polled while things work. Each state transition is
/// logged once.
///
/// New data goes on the air by registering the advertisement afresh, with our
/// discovery paused, not by a live update. A controller with only legacy
/// advertising (btvirt, many Bluetooth 4.x chips) must take a new random
/// address to start a non-connectable advertisement, and refuses to while it
/// scans (HCI Command Disallowed). The kernel does not pause the scan for it:
/// bluetoothd then fails `RegisterAdvertisement` with `org.bluez.Error.Failed`,
/// and a live update (`PropertiesChanged`) silently takes the advertisement
/// off the air. Registering afresh also gives every payload a new address.
public actor LERadio: Radio {
    public struct Configuration: Sendable {
        public var adapter: AdapterSelector = .automatic
        /// Switch the adapter on when it is off.
        public var powerOnAdapter = true
        /// The company ID of our Manufacturer Specific Data (0xFFFF: the SIG's test ID).
        public var companyID: UInt16 = 0xFFFF
        /// Where the advertisement object of slot 0 is exported; slot N's path
        /// ends in N instead of the 0 (`advertisementPath(slot:)`).
        public var advertisementPath: DBusObjectPath = "/org/handoff/advertisement0"
        /// Advertising interval bounds in milliseconds, if set.
        public var minInterval: UInt32?
        public var maxInterval: UInt32?
        /// How long scan events may wait to be handed over together (see
        /// `AdvertisementScanner`): fewer wakeups of the consumer under heavy
        /// traffic, for at most this much delay. Zero hands each over at once.
        /// 50 ms is below a beacon's own advertising interval (100 ms or more)
        /// and below what a person notices (docs/BENCHMARKS.md, "Scanning").
        public var reportCoalescing: Duration = .milliseconds(50)
        /// Scan events kept for a consumer that falls behind before the oldest
        /// are dropped (counted in `RadioStatus.droppedReports` and logged).
        public var reportBuffer = 4096
        /// At most one log line about dropped reports per this interval.
        public var droppedReportLogInterval: Duration = .seconds(60)
        /// How failed passes are retried.
        public var retry = Reconciler.Backoff()
        /// How long the adapter may take to report `Discovering` after
        /// `StartDiscovery`. When the kernel is busy with another scan (a
        /// killed bluetoothd's), bluetoothd answers InProgress, as if our
        /// session existed, and drops it. See `LERadio+DiscoveryCheck.swift`.
        public var discoveryConfirmation: Duration = .milliseconds(1500)
        /// When not empty: listen with a passive advertisement monitor of these
        /// or-patterns instead of discovery when bluetoothd offers one, falling
        /// back to discovery otherwise (LERadio+Monitor.swift). Empty: discovery.
        public var monitorPatterns: [AdvertisementPattern] = []

        public init() {}
    }

    public let connection: DBusConnection
    public let manager: BlueZObjectManager
    public let scanner: AdvertisementScanner
    public let configuration: Configuration
    let logger: Logger

    /// What is wanted on the air, by slot.
    public private(set) var wanted: [Int: RadioAdvertisement] = [:]
    // What bluetoothd has, as far as we know.
    var adapter: Adapter1?
    var scanning = false
    /// Our advertising instances, by slot (LERadio+Advertising.swift).
    var slots: [Int: AdvertisingSlot] = [:]
    /// Whether bluetoothd has any of our advertisements registered.
    var registered: Bool { slots.values.contains { $0.registered } }
    private var poweringOn: DBusObjectPath?
    // Bookkeeping.
    private var phase: RadioStatus.Phase = .waitingForBluetoothd
    var lastError: String?
    let reconciler: Reconciler
    var stopped = false
    // Discovery confirmation (LERadio+DiscoveryCheck.swift).
    /// When the first `StartDiscovery` not yet followed by `Discovering` was accepted.
    var unconfirmedSince: ContinuousClock.Instant?
    var confirmationTask: Task<Void, Never>?
    /// The confirmation came due while a pass ran: checked when the passes end.
    var discoveryCheckDue = false
    /// bluetoothd answered InProgress while the adapter did not discover.
    var busyReply = false
    /// The adapter we power-cycled to clear a killed bluetoothd's scan, once per bluetoothd run.
    var powerCycledForStaleScan: DBusObjectPath?
    /// How many `pauseDiscovery` calls are not resumed yet.
    var discoveryPauses = 0
    // The advertisement monitor (LERadio+Monitor.swift).
    var monitor: AdvertisementMonitor1?
    var monitorRegistered = false
    /// bluetoothd called Activate on it.
    var monitorActive = false
    /// The radio fell back to discovery, and until when (LERadio+Monitor.swift).
    var monitorFallback: MonitorFallback?

    public init(
        connection: DBusConnection, manager: BlueZObjectManager, configuration: Configuration = Configuration(),
        logger: Logger = Logger(label: "handoff.bluez")
    ) {
        self.connection = connection
        self.manager = manager
        self.configuration = configuration
        self.logger = logger
        self.reconciler = Reconciler(backoff: configuration.retry)
        self.scanner = AdvertisementScanner(
            manager: manager, adapter: nil, companyID: configuration.companyID,
            bufferSize: configuration.reportBuffer, coalescing: configuration.reportCoalescing, logger: logger,
            dropLogInterval: configuration.droppedReportLogInterval)
    }

    /// The scan events of the chosen adapter.
    public nonisolated var scanEvents: ScanEvents { scanner.events }

    public nonisolated var bluez: BlueZContext? {
        BlueZContext(connection: connection, manager: manager, adapter: configuration.adapter)
    }

    public var status: RadioStatus {
        RadioStatus(
            phase: phase, adapter: adapter?.interfaceName, adapterAddress: adapter?.address, scanning: scanning || monitorRegistered,
            advertising: registered, advertisingSlots: Set(slots.filter(\.value.registered).keys),
            slotErrors: slotErrors, lastError: lastError, droppedReports: scanner.counters.dropped,
            scanPath: scanPath)
    }

    /// Runs until the task is cancelled, then unregisters and stops discovery.
    public func run() async {
        // Only adapter-level changes matter here; device traffic stays with the scanner.
        let (events, continuation) = AsyncStream<BlueZObjectManager.Event>.makeStream()
        let token = manager.observe { event in
            if Self.concernsAdapters(event) { continuation.yield(event) }
        }
        defer { token.cancel() }
        await reconcile()
        for await event in events {
            if Task.isCancelled { break }
            if note(event) { await reconcile() }
        }
        // In a task of its own: unregistering must not be cut short by our cancellation.
        await Task { await self.shutDown() }.value
    }

    /// Puts `advertisements` on the air, one per slot, and takes the other
    /// slots off. New data, or a new type, is registered afresh (see the
    /// type's notes). Returns after a pass for it, or, when a pass is under
    /// way, once that one knows to go round again.
    public func advertise(_ advertisements: [RadioAdvertisement]) async {
        let new = Dictionary(advertisements.map { ($0.slot, $0) }, uniquingKeysWith: { _, last in last })
        guard new != wanted else { return }
        wanted = new
        // In a task of its own: the caller's cancellation (a rotation timer
        // replaced by a newer one) must not cut a registration in half.
        await Task { await self.reconcile() }.value
    }

    /// Unregisters the advertisement, stops discovery and takes our objects off the bus.
    public func shutDown() async {
        guard !stopped else { return }
        stopped = true
        // A registration in flight ends first: `registered` then says whether to unregister.
        await reconciler.stopAfterPass()
        confirmationTask?.cancel()
        if let adapter {
            for slot in slots.values where slot.registered {
                guard let advertisement = slot.advertisement else { continue }
                try? await LEAdvertisingManager1.unregisterAdvertisement(
                    advertisement.path, adapter: adapter.path, on: connection)
            }
            if scanning { try? await Adapter1.stopDiscovery(adapter: adapter.path, on: connection) }
        }
        await shutDownMonitor(on: adapter)
        for slot in slots.values { await slot.advertisement?.unexport() }
        slots = [:]
        scanning = false
        scanner.stop()
    }

    // MARK: Reacting to bluetoothd

    private static func concernsAdapters(_ event: BlueZObjectManager.Event) -> Bool {
        switch event {
        case .serviceAppeared, .serviceVanished: true
        case .interfacesAdded(_, let interfaces):
            interfaces[Adapter1.interface] != nil || interfaces[LEAdvertisingManager1.interface] != nil
                || interfaces[AdvertisementMonitorManager1.interface] != nil
        case .interfacesRemoved(_, let names): names.contains(Adapter1.interface)
        case .propertiesChanged(_, let interface, _, _, _): interface == Adapter1.interface
        }
    }

    /// Updates what we know from one change; returns true when a pass is needed.
    private func note(_ event: BlueZObjectManager.Event) -> Bool {
        switch event {
        case .serviceVanished:
            forgetAdapterState()
            forgetMonitor()
            powerCycledForStaleScan = nil
            return true
        case .serviceAppeared:
            // A fresh bluetoothd: failures before it say nothing about it. The
            // monitor state was forgotten when the last one went (serviceVanished);
            // what a pass did since, while the tree loaded, was with this one.
            reconciler.resetBackoff()
            powerCycledForStaleScan = nil
            return true
        case .interfacesAdded(let path, let interfaces):
            if interfaces[AdvertisementMonitorManager1.interface] != nil && monitorManagerAppeared(on: path) {
                return true
            }
            return interfaces[Adapter1.interface] != nil || interfaces[LEAdvertisingManager1.interface] != nil
        case .interfacesRemoved(let path, let names):
            if path == adapter?.path && names.contains(Adapter1.interface) {
                forgetAdapterState()
                return true
            }
            return false
        case .propertiesChanged(let path, let interface, let changed, _, _):
            guard interface == Adapter1.interface else { return false }
            if path == adapter?.path {
                if changed["Discovering"] == .boolean(true) { discoveryConfirmed() }
                if changed["Powered"] == .boolean(false) {
                    scanning = false
                    // bluetoothd keeps the registration, but after power-on a legacy
                    // controller cannot restart a broadcast advertisement while we
                    // scan (seen on the VM rig: off the air until the next renewal).
                    // Register it afresh, with discovery paused.
                    for key in slots.keys { slots[key]?.registeredPayload = nil }
                    discoveryConfirmed()
                    return true
                }
                // Discovery that stops under us needs a pass. Our own pause (scanning
                // is already false then) and restart do not: while a registration
                // keeps failing, they would start pass after pass, with no backoff.
                if changed["Discovering"] == .boolean(false) && scanning {
                    scanning = false
                    return true
                }
                return changed["Powered"] != nil
            }
            return changed["Powered"] != nil || changed["Discovering"] != nil
        }
    }

    private func forgetAdapterState() {
        adapter = nil
        scanning = false
        forgetMonitor()
        forgetRegistrations()
        poweringOn = nil
        discoveryConfirmed()
        scanner.setAdapter(nil)
    }

    func released(slot: Int) async {
        guard slots[slot]?.registered == true else { return }
        logger.notice("bluetoothd released the advertisement of slot \(slot)")
        slots[slot]?.registered = false
        slots[slot]?.registeredPayload = nil
        await reconcile()
    }

    // MARK: Reconciling

    func reconcile() async {
        guard !stopped else { return }
        await reconciler.reconcile(retry: { [weak self] in await self?.reconcile() }) {
            try await pass()
            lastError = slotErrors.sorted { $0.key < $1.key }.first?.value
        } failed: { error in
            let why = Self.describe(error)
            lastError = why
            transition(to: .failing(why))
        }
        // A discovery check that came due during the passes runs now.
        if discoveryCheckDue && !reconciler.isRunning {
            discoveryCheckDue = false
            await checkDiscovery()
        }
    }

    private func pass() async throws {
        guard manager.isServicePresent else {
            forgetAdapterState()
            transition(to: .waitingForBluetoothd)
            return
        }
        guard let chosen = configuration.adapter.choose(from: manager.adapters()) else {
            forgetAdapterState()
            transition(to: .waitingForAdapter)
            return
        }
        if chosen.path != adapter?.path {
            scanning = false
            forgetMonitor()
            forgetRegistrations()
            poweringOn = nil
            scanner.setAdapter(chosen.path)
            logger.info("using adapter \(chosen.interfaceName) (\(chosen.address))")
        }
        adapter = chosen
        if !chosen.powered {
            scanning = false
            guard configuration.powerOnAdapter && poweringOn != chosen.path else {
                transition(to: .adapterOff(chosen.interfaceName))
                return
            }
            poweringOn = chosen.path
            logger.info("powering on \(chosen.interfaceName)")
            // A successful write means it is on, even if our mirror has not caught up yet.
            try await Adapter1.setPowered(true, adapter: chosen.path, on: connection)
        }
        poweringOn = nil
        // Advertising first: it may pause our discovery, which is resumed
        // below even when the advertisement could not be registered.
        var advertisingFailure: (any Error)?
        do {
            try await reconcileAdvertisements(on: chosen)
        } catch {
            advertisingFailure = error
        }
        let monitoring = try await reconcileMonitor(on: chosen)
        if !monitoring && discoveryPauses == 0 && (!scanning || !chosen.discovering) {
            try await Adapter1.setDiscoveryFilter(.handoff, adapter: chosen.path, on: connection)
            var inProgress = false
            do {
                try await Adapter1.startDiscovery(adapter: chosen.path, on: connection)
            } catch let error as DBusError where error.is(.bluezInProgress) {
                // Either our session already exists, or the kernel is busy with
                // another scan and bluetoothd dropped the session: the
                // confirmation tells which.
                inProgress = true
            }
            discoveryAccepted(on: chosen, inProgress: inProgress)
            scanning = true
        }
        if let advertisingFailure { throw advertisingFailure }
        transition(to: .ready(chosen.interfaceName))
    }

    func transition(to new: RadioStatus.Phase) {
        guard new != phase else { return }
        phase = new
        switch new {
        case .ready: logger.notice("\(new)")
        case .failing: logger.warning("\(new)")
        default: logger.notice("\(new)")
        }
    }

    static func describe(_ error: Error) -> String {
        if let error = error as? DBusError {
            switch error.name {
            case DBusError.Name.bluezNotPermitted.rawValue:
                return "bluetoothd refused the advertisement: no free advertising instance (\(error.message))"
            case DBusError.Name.bluezInvalidLength.rawValue:
                return "bluetoothd refused the advertisement: the data is too long (\(error.message))"
            default:
                return error.description
            }
        }
        return String(describing: error)
    }
}
