import DBus

/// `org.bluez.AdvertisementMonitorManager1` on each adapter, offered only with
/// `SimulatorConfiguration.experimental` (bluetoothd's `-E`), and the monitors
/// registered with it (org.bluez.AdvertisementMonitorManager(5),
/// org.bluez.AdvertisementMonitor(5)).
///
/// RegisterMonitor reads the application's tree (GetManagedObjects on the
/// caller) before it replies; after the reply each `AdvertisementMonitor1`
/// object gets `Activate` when it is a valid `or_patterns` monitor, `Release`
/// otherwise. While an adapter has an active monitor its controller scans
/// passively: reports matching a monitor reach bluetoothd even when nobody
/// discovers (BluetoothDaemon+Air.swift) and the monitor gets `DeviceFound`
/// once per device; `DeviceLost` when that Device1 goes (TemporaryTimeout,
/// RemoveDevice, power-off). Monitors are read at registration only: objects
/// exported below the root later are not picked up.
extension BluetoothDaemon {
    static let monitorManagerInterface = "org.bluez.AdvertisementMonitorManager1"
    static let monitorInterface = "org.bluez.AdvertisementMonitor1"

    func makeMonitorManagerInterface(_ adapter: SimulatedAdapter) -> DBusInterface {
        let name = adapter.name
        return DBusInterface(
            Self.monitorManagerInterface,
            methods: [
                DBusMethod("RegisterMonitor", inputs: "o", argumentNames: ["application"]) { [weak self] call in
                    guard case .objectPath(let path) = call.body[0] else { throw BlueZError.invalidArguments() }
                    guard let self else { throw BlueZError.failed("bluetoothd is shutting down") }
                    try await self.registerMonitor(on: name, sender: call.sender ?? "", root: path)
                    return []
                },
                DBusMethod("UnregisterMonitor", inputs: "o", argumentNames: ["application"]) { [weak self] call in
                    guard case .objectPath(let path) = call.body[0] else { throw BlueZError.invalidArguments() }
                    try await self?.unregisterMonitor(on: name, sender: call.sender ?? "", root: path)
                    return []
                },
            ],
            properties: [
                DBusProperty("SupportedMonitorTypes", ["or_patterns"], changeSignal: .const),
                DBusProperty("SupportedFeatures", [String](), changeSignal: .const),
            ])
    }

    // MARK: Methods

    func registerMonitor(on name: String, sender: String, root: DBusObjectPath) async throws(DBusError) {
        let adapter = try self.adapter(name)
        if adapter.monitorApplications.contains(where: { $0.owner == sender && $0.root == root }) {
            throw BlueZError.alreadyExists()
        }
        adapter.monitorApplications.append((sender, root))
        watchClient(sender)
        log.info("\(name): RegisterMonitor \(root) from \(sender)")
        let objects = await fetchApplicationObjects(owner: sender, path: root)
        guard running, adapters[name] === adapter,
            adapter.monitorApplications.contains(where: { $0.owner == sender && $0.root == root })
        else { throw BlueZError.failed("Failed to register monitor") }
        guard let objects else {
            adapter.monitorApplications.removeAll { $0.owner == sender && $0.root == root }
            log.info("\(name): monitor application \(root) of \(sender) refused: its objects cannot be read")
            throw BlueZError.failed("Failed to register monitor")
        }
        let wasListening = adapter.listening
        for object in objects {
            guard let properties = object.interfaces.first(where: { $0.name == Self.monitorInterface })?.properties
            else { continue }
            guard let patterns = RegisteredMonitor.parse(properties) else {
                log.info("\(name): monitor \(object.path) of \(sender) is invalid; Release")
                call("Release", on: object.path, of: sender)
                continue
            }
            if patterns.count > RegisteredMonitor.heapSafePatterns {
                // What bluetoothd does: it computes the Add Adv Patterns Monitor command's length in a
                // uint8_t, 1 + 34 bytes a pattern, so from 8 patterns on it allocates too little and
                // copies the patterns past the end (src/adv_monitor.c, 5.66 to at least 5.79); on the VM
                // rig it then aborted with "free(): invalid next size (fast)".
                log.error("\(name): monitor \(object.path) of \(sender) has \(patterns.count) patterns: bluetoothd's "
                    + "Add Adv Patterns Monitor length wraps (1 + 34 × \(patterns.count) = \(1 + 34 * patterns.count) "
                    + "bytes in a uint8_t: \((1 + 34 * patterns.count) & 0xFF)) and the copy overruns its heap; "
                    + "bluetoothd aborts, and so does this simulated one (org.bluez leaves the bus)")
                Task { await self.shutDown(graceful: false) }
                throw BlueZError.failed("bluetoothd aborted")
            }
            adapter.monitors.append(
                RegisteredMonitor(owner: sender, application: root, path: object.path, patterns: patterns))
            log.info("\(name): monitor \(object.path) of \(sender) active (\(patterns.count) patterns)")
            call("Activate", on: object.path, of: sender)
        }
        // A passive scan that starts hears every advertiser once.
        if !wasListening && adapter.listening { hearEverything(on: adapter) }
        await writer.flush()
    }

    func unregisterMonitor(on name: String, sender: String, root: DBusObjectPath) async throws(DBusError) {
        let adapter = try self.adapter(name)
        guard adapter.monitorApplications.contains(where: { $0.owner == sender && $0.root == root }) else {
            throw BlueZError.doesNotExist()
        }
        log.info("\(name): UnregisterMonitor \(root) from \(sender)")
        dropMonitors(of: adapter) { $0.owner == sender && $0.root == root }
        await writer.flush()
    }

    // MARK: Bookkeeping

    /// Drops the applications `which` selects and their monitors, with Release
    /// when `release` (UnregisterMonitor, adapter removed, graceful stop).
    func dropMonitors(
        of adapter: SimulatedAdapter, release: Bool = true, _ which: ((owner: String, root: DBusObjectPath)) -> Bool
    ) {
        let gone = adapter.monitors.filter { which(($0.owner, $0.application)) }
        adapter.monitors.removeAll { which(($0.owner, $0.application)) }
        adapter.monitorApplications.removeAll(where: which)
        guard release else { return }
        for monitor in gone { call("Release", on: monitor.path, of: monitor.owner) }
    }

    /// The active monitors of `scanner` that `report` matches.
    func monitors(of scanner: SimulatedAdapter, matching report: AirReport) -> [RegisteredMonitor] {
        guard !scanner.monitors.isEmpty else { return [] }
        let structures = report.adStructures
        return scanner.monitors.filter { $0.matches(structures) }
    }

    /// DeviceFound to each of `monitors` that has not reported the device yet.
    func monitorsFound(_ device: RemoteDevice, _ monitors: [RegisteredMonitor]) {
        for monitor in monitors where monitor.found.insert(device.address).inserted {
            call("DeviceFound", on: monitor.path, of: monitor.owner, [.objectPath(device.path)])
        }
    }

    /// DeviceLost to each monitor that reported the device, which is going.
    func monitorsLost(_ device: RemoteDevice, on scanner: SimulatedAdapter) {
        for monitor in scanner.monitors where monitor.found.remove(device.address) != nil {
            call("DeviceLost", on: monitor.path, of: monitor.owner, [.objectPath(device.path)])
        }
    }

    /// Calls a monitor method with no reply expected, in order with the signals.
    private func call(_ member: String, on path: DBusObjectPath, of owner: String, _ body: [DBusValue] = []) {
        callWithoutReply(owner, path, Self.monitorInterface, member, body)
    }

    /// Calls a client's method with no reply expected (bluetoothd's `[noreply]`
    /// calls: Release, Activate, …), in order with the signals.
    func callWithoutReply(
        _ owner: String, _ path: DBusObjectPath, _ interface: String, _ member: String, _ body: [DBusValue] = []
    ) {
        var message = DBusMessage.methodCall(
            destination: owner, path: path, interface: interface, member: member, body: body)
        message.noReplyExpected = true
        let outgoing = message
        let connection = self.connection
        let log = self.log
        writer.enqueue {
            do { try connection.send(outgoing) } catch { log.error("cannot send \(member): \(error)") }
        }
    }
}
