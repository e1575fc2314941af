import DBus

/// Scanning with an advertisement monitor (docs/e2e.md, "AdvertisementMonitor").
///
/// With `Configuration.monitorPatterns` and an adapter whose bluetoothd
/// offers `AdvertisementMonitorManager1` with "or_patterns" (BlueZ 5.66 only
/// with `-E`), the radio registers one passive monitor with those patterns
/// instead of starting discovery (handoffd's: docs/e2e.md, "AdvertisementMonitor").
/// Advertisements that match no pattern then never reach the bus. When bluetoothd offers no such manager, refuses the
/// registration, or releases the monitor, the radio falls back to filtered
/// discovery, logging why once: until the manager appears on the adapter (it
/// had none), or else until bluetoothd restarts or the adapter goes or changes;
/// then the monitor is registered again. One registration per bluetoothd run:
/// a pass while bluetoothd's tree is still loading may register it, and the
/// tree's arrival does not register it again. A Release that comes after the
/// adapter went is not a refusal: it is ignored, and so is every monitor call
/// from anyone but the bluetoothd that owns org.bluez now (a local user could
/// otherwise push the radio off the monitor, or an old bluetoothd's late
/// Release could).
extension LERadio {
    /// Until when the radio stays on discovery after falling back.
    enum MonitorFallback {
        /// bluetoothd offered no monitor manager on the adapter: until it does.
        case untilManagerAppears
        /// bluetoothd refused or released the monitor: until it restarts, or the adapter goes or changes.
        case untilBluetoothdRestarts
    }

    /// Where the monitor application lives: beside the advertisement objects.
    var monitorRoot: DBusObjectPath {
        let base = configuration.advertisementPath.rawValue
        let parent = base.split(separator: "/").dropLast().joined(separator: "/")
        return (try? DBusObjectPath("/" + parent + (parent.isEmpty ? "" : "/") + "monitor")) ?? "/monitor"
    }

    /// Brings the monitor in line on `adapter` (one application, its patterns
    /// spread over as many monitor objects as needed). True when it is registered, so
    /// that the pass does not start discovery; false to fall back to discovery.
    func reconcileMonitor(on adapter: Adapter1) async throws -> Bool {
        guard !configuration.monitorPatterns.isEmpty, monitorFallback == nil else { return false }
        guard let manager = manager.advertisementMonitorManager(of: adapter.path), manager.offersOrPatterns else {
            fallBack("bluetoothd offers no AdvertisementMonitorManager1 with or_patterns on \(adapter.interfaceName) "
                + "(BlueZ marks it experimental: bluetoothd -E)", until: .untilManagerAppears)
            return false
        }
        if monitorRegistered { return true }
        let monitor: AdvertisementMonitor1
        if let existing = self.monitor {
            monitor = existing
        } else {
            monitor = try await AdvertisementMonitor1.export(
                configuration.monitorPatterns, root: monitorRoot, on: connection
            ) { [weak self] _, event, sender in
                Task { await self?.monitorEvent(event, from: sender) }
            }
            self.monitor = monitor
        }
        do {
            try await AdvertisementMonitorManager1.registerMonitor(monitor.root, adapter: adapter.path, on: connection)
        } catch let error as DBusError where error.is(.bluezAlreadyExists) {
            // Ours from before a reply we did not get: still registered.
        } catch {
            fallBack("bluetoothd refused the advertisement monitor: \(Self.describe(error))")
            return false
        }
        monitorRegistered = true
        let offload = manager.controllerFilters ? "the controller filters" : "bluetoothd filters"
        logger.notice("scanning with an advertisement monitor on \(adapter.interfaceName) (\(offload))")
        return true
    }

    /// Falls back to discovery until bluetoothd restarts (or, `until` says so, until the
    /// adapter gets an AdvertisementMonitorManager1); says why once.
    func fallBack(_ why: String, until: MonitorFallback = .untilBluetoothdRestarts) {
        guard monitorFallback == nil else { return }
        monitorFallback = until
        monitorRegistered = false
        monitorActive = false
        logger.notice("\(why); scanning with filtered discovery instead")
    }

    /// bluetoothd or the adapter went, or another adapter is chosen: the next
    /// one gets the monitor registered again.
    func forgetMonitor() {
        monitorRegistered = false
        monitorActive = false
        monitorFallback = nil
    }

    /// An AdvertisementMonitorManager1 appeared at `path`: when it is the one our
    /// adapter had lacked, the fallback ends. True when a pass is needed for it.
    func monitorManagerAppeared(on path: DBusObjectPath) -> Bool {
        guard path == adapter?.path, monitorFallback == .untilManagerAppears else { return false }
        monitorFallback = nil
        return true
    }

    /// A call on the monitor objects. Only the bluetoothd that owns org.bluez
    /// now is heard; anyone else's call, or a late one from a bluetoothd that
    /// has since gone, is ignored.
    func monitorEvent(_ event: AdvertisementMonitorEvent, from sender: String?) async {
        guard !stopped else { return }
        guard let sender, sender == manager.serviceOwner else {
            logger.debug("ignored \(event) on the advertisement monitor from \(sender ?? "nobody"): not bluetoothd")
            return
        }
        switch event {
        case .activated:
            monitorActive = true
        case .released:
            guard monitorRegistered else { return }
            fallBack("bluetoothd released the advertisement monitor")
            await reconcile()
        case .deviceFound, .deviceLost:
            // The Device1 objects and their changes carry what the scanner needs.
            break
        }
    }

    /// The scan path in use.
    var scanPath: ScanPath {
        if monitorRegistered { return .monitor }
        return scanning ? .discovery : .none
    }

    /// Unregisters the monitor and takes it off the bus (shutting down).
    func shutDownMonitor(on adapter: Adapter1?) async {
        if let adapter, monitorRegistered, let monitor {
            try? await AdvertisementMonitorManager1.unregisterMonitor(monitor.root, adapter: adapter.path, on: connection)
        }
        monitorRegistered = false
        await monitor?.unexport()
        monitor = nil
    }
}
