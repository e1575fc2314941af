import DBus

/// Checking that discovery really started, and clearing a killed bluetoothd's scan.
///
/// bluetoothd 5.66 answers `StartDiscovery` once the kernel has answered it.
/// When the kernel refuses (mgmt status Busy), bluetoothd answers
/// `org.bluez.Error.InProgress`, the same error as for a second session of the
/// same client, and drops the session: `Discovering` stays false. So
/// InProgress cannot tell "ours is running" from "nobody's is". On the VM rig
/// the kernel is busy after bluetoothd is killed (SIGKILL)
/// while it discovers: the kernel goes on with that scan until its LE
/// discovery round ends (up to 10.24 s), and the new bluetoothd knows nothing
/// of it. Meanwhile a legacy controller also refuses to start a broadcast
/// advertisement (`org.bluez.Error.Failed`), since it is scanning.
///
/// So after `StartDiscovery` (accepted or InProgress), `LERadio` waits up to
/// `Configuration.discoveryConfirmation` for `Discovering`, or not at all when
/// the answer was InProgress and the adapter is not discovering. When it does not
/// come, and the radio may manage the adapter's power (`powerOnAdapter`), and
/// no device is connected on that adapter, it powers the adapter off once per
/// bluetoothd run: that ends every scan and advertisement in the kernel, and
/// the next pass powers it on and sets everything up again. Otherwise it
/// retries with backoff until the kernel's scan ends on its own.
extension LERadio {
    /// Called after bluetoothd accepted our `StartDiscovery`, or answered InProgress.
    /// InProgress while the adapter does not discover cannot mean that our session
    /// runs (it would be discovering): the kernel is busy, so the check runs as
    /// soon as the passes end, without waiting.
    func discoveryAccepted(on adapter: Adapter1, inProgress: Bool = false) {
        if unconfirmedSince == nil {
            unconfirmedSince = .now
            armConfirmation(after: configuration.discoveryConfirmation)
        }
        if inProgress, manager.adapters().first(where: { $0.path == adapter.path })?.discovering == false {
            busyReply = true
            discoveryCheckDue = true
        }
    }

    /// `Discovering` came (or the adapter or bluetoothd went): nothing to check.
    func discoveryConfirmed() {
        unconfirmedSince = nil
        discoveryCheckDue = false
        busyReply = false
        confirmationTask?.cancel()
        confirmationTask = nil
    }

    private func armConfirmation(after delay: Duration) {
        confirmationTask?.cancel()
        confirmationTask = Task { [weak self] in
            try? await Task.sleep(for: delay)
            guard !Task.isCancelled else { return }
            await self?.checkDiscovery()
        }
    }

    func checkDiscovery() async {
        confirmationTask = nil
        guard !stopped, let since = unconfirmedSince, let path = adapter?.path else { return }
        // A pass under way may be starting discovery right now: look when it ends.
        if reconciler.isRunning {
            discoveryCheckDue = true
            return
        }
        guard let current = manager.adapters().first(where: { $0.path == path }), current.powered else {
            return discoveryConfirmed()
        }
        if current.discovering { return discoveryConfirmed() }
        let waited = ContinuousClock.now - since
        let answer = busyReply ? "; StartDiscovery said InProgress" : ""
        busyReply = false
        unconfirmedSince = nil
        confirmationTask?.cancel()
        confirmationTask = nil
        scanning = false
        let connected = manager.devices(on: path).filter(\.connected).count
        if configuration.powerOnAdapter && powerCycledForStaleScan != path && connected == 0 {
            powerCycledForStaleScan = path
            logger.notice(
                "\(current.interfaceName) did not start discovering (after \(waited.seconds)\(answer)): the kernel still runs an earlier scan (a killed bluetoothd's?); powering \(current.interfaceName) off and on to clear it"
            )
            do {
                try await Adapter1.setPowered(false, adapter: path, on: connection)
                // The Powered change starts the pass that powers it on again.
            } catch {
                lastError = Self.describe(error)
                transition(to: .failing("could not power \(current.interfaceName) off: \(Self.describe(error))"))
                reconciler.retryLater { [weak self] in await self?.reconcile() }
            }
            return
        }
        let why =
            connected > 0
            ? "\(connected) device(s) connected, so it is not power-cycled"
            : configuration.powerOnAdapter ? "already power-cycled once" : "power management is off (PowerOnAdapter)"
        let message =
            "\(current.interfaceName) did not start discovering (after \(waited.seconds)\(answer); \(why)); trying again"
        lastError = message
        transition(to: .failing(message))
        reconciler.retryLater { [weak self] in await self?.reconcile() }
    }
}

extension Duration {
    /// "1.25 s".
    fileprivate var seconds: String {
        let (s, attoseconds) = components
        let hundredths = attoseconds / 10_000_000_000_000_000
        return "\(s).\(hundredths < 10 ? "0" : "")\(hundredths) s"
    }
}
