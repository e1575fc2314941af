import DBus

extension BluetoothDaemon {
    // MARK: LEAdvertisingManager1 methods

    /// RegisterAdvertisement, as bluetoothd runs it: take an instance, then
    /// read the object's properties from the caller (GetManagedObjects at the
    /// path, then Properties.GetAll) before replying, check them, and put the
    /// advertisement on the air.
    func registerAdvertisement(on name: String, sender: String, path: DBusObjectPath) async throws(DBusError) {
        let adapter = try self.adapter(name)
        if adapter.advertisements.contains(where: { $0.owner == sender && $0.path == path }) {
            throw BlueZError.alreadyExists()
        }
        guard let instance = adapter.freeInstance(limit: configuration.supportedInstances) else {
            log.info("\(name): RegisterAdvertisement \(path) from \(sender): no free instance")
            throw BlueZError.notPermitted("Maximum advertisements reached")
        }
        let advertisement = RegisteredAdvertisement(
            id: makeID(), owner: sender, path: path, instance: instance,
            address: .randomNonResolvable(using: &random))
        adapter.advertisements.append(advertisement)
        watchClient(sender)
        log.info("\(name): RegisterAdvertisement \(path) from \(sender) (instance \(instance))")

        // Follow PropertiesChanged from the start, as bluetoothd's proxy does.
        let changes = try? await connection.signals(
            matching: DBusMatchRule(
                sender: sender, interface: Self.propertiesInterface, member: "PropertiesChanged", path: path,
                arguments: [0: Self.advertisementInterface]))
        let properties: [String: DBusValue]
        do {
            properties = try await fetchAdvertisementProperties(owner: sender, path: path)
        } catch {
            Self.discard(changes)
            if adapter.advertisements.contains(where: { $0 === advertisement }) {
                remove(advertisement, from: adapter, announce: false)
            }
            log.info("\(name): cannot read \(path) from \(sender): \(error)")
            throw BlueZError.failed("Failed to parse advertisement.")
        }
        guard running, adapters[name] === adapter, adapter.advertisements.contains(where: { $0 === advertisement })
        else {
            Self.discard(changes)
            throw BlueZError.failed("Failed to complete registration")
        }
        do throws(AdvertisementProblem) {
            let content = try AdvertisementParser.parse(properties, maxLength: configuration.maxAdvertisingLength)
            try content.checkLength(
                maxLength: configuration.maxAdvertisingLength,
                adapterDiscoverable: adapter.switches.current.discoverable)
            advertisement.content = content
            advertisement.properties = properties
        } catch {
            Self.discard(changes)
            remove(advertisement, from: adapter, announce: false)
            switch error {
            case .invalid(let reason):
                log.info("\(name): \(path) refused: \(reason)")
                throw BlueZError.failed("Failed to parse advertisement.")
            case .tooLong(let length, let budget):
                log.info("\(name): \(path) refused: \(length) bytes of advertising data, at most \(budget)")
                throw BlueZError.tooLong(name: configuration.lengthErrorName, length: length, budget: budget)
            }
        }
        if cannotStartWhileScanning(advertisement, on: adapter) {
            Self.discard(changes)
            remove(advertisement, from: adapter, announce: false)
            log.info("\(name): \(path) refused: a legacy controller cannot take a new address while it scans")
            throw BlueZError.failed("Failed to register advertisement")
        }
        activate(advertisement, on: adapter, following: changes)
        await writer.flush()
    }

    /// UnregisterAdvertisement: the advertisement goes without Release.
    func unregisterAdvertisement(on name: String, sender: String, path: DBusObjectPath) async throws(DBusError) {
        let adapter = try self.adapter(name)
        guard let advertisement = adapter.advertisements.first(where: { $0.owner == sender && $0.path == path }) else {
            throw BlueZError.doesNotExist()
        }
        log.info("\(name): UnregisterAdvertisement \(path) from \(sender)")
        remove(advertisement, from: adapter)
        await writer.flush()
    }

    // MARK: Lifecycle

    private func activate(
        _ advertisement: RegisteredAdvertisement, on adapter: SimulatedAdapter,
        following changes: AsyncThrowingStream<DBusMessage, Error>?
    ) {
        advertisement.state = .active
        stats.update { $0.advertisementsRegistered += 1 }
        publishInstances(adapter)
        startTimeout(advertisement, on: adapter)
        startDiscoverableTimeout(advertisement, on: adapter)
        if let changes {
            let name = adapter.name
            let id = advertisement.id
            advertisement.watch = Task { [weak self] in
                do {
                    for try await message in changes {
                        guard message.body.count == 3, case .string(Self.advertisementInterface) = message.body[0],
                            let changed = message.body[1].vardict, let invalidated = message.body[2].arrayElements
                        else { continue }
                        await self?.advertisementChanged(
                            on: name, id: id, changed: changed, invalidated: invalidated.compactMap(\.string))
                    }
                } catch {}
            }
        }
        log.info(
            "\(adapter.name): advertising \(advertisement.path) as \(advertisement.address) "
                + "(\(advertisement.content.kind.rawValue), "
                + "\(advertisement.content.advertisingDataLength(discoverableTimedOut: false)) bytes)")
        transmit(advertisement, from: adapter)
    }

    /// A non-connectable advertisement needs a new random address to start,
    /// which a legacy controller refuses while it scans.
    func cannotStartWhileScanning(_ advertisement: RegisteredAdvertisement, on adapter: SimulatedAdapter) -> Bool {
        configuration.legacyAdvertising && advertisement.content.kind == .broadcast && adapter.controllerScanning
    }

    /// The adapter stopped discovering: advertisements a legacy controller
    /// could not restart go back on the air, each with a new address.
    func resumeAdvertising(on adapter: SimulatedAdapter) {
        for advertisement in adapter.activeAdvertisements where advertisement.offAir {
            advertisement.offAir = false
            advertisement.address = .randomNonResolvable(using: &random)
            log.info("\(adapter.name): \(advertisement.path) back on the air as \(advertisement.address)")
            transmit(advertisement, from: adapter)
        }
    }

    /// Takes an advertisement off the adapter (no Release: callers send it when bluetoothd would).
    func remove(_ advertisement: RegisteredAdvertisement, from adapter: SimulatedAdapter, announce: Bool = true) {
        advertisement.stop()
        let wasCounted = adapter.advertisements.contains { $0 === advertisement }
        adapter.advertisements.removeAll { $0 === advertisement }
        if announce && wasCounted { publishInstances(adapter) }
    }

    /// Calls `Release` on the advertisement object: a method call with no reply expected.
    func release(_ advertisement: RegisteredAdvertisement) {
        callWithoutReply(advertisement.owner, advertisement.path, Self.advertisementInterface, "Release")
        stats.update { $0.advertisementsReleased += 1 }
        log.info("Release \(advertisement.path) of \(advertisement.owner)")
    }

    // MARK: Timers

    private func startTimeout(_ advertisement: RegisteredAdvertisement, on adapter: SimulatedAdapter) {
        advertisement.timeoutTimer?.cancel()
        advertisement.timeoutTimer = nil
        let seconds = advertisement.content.timeout
        guard seconds > 0 else { return }
        let name = adapter.name
        let id = advertisement.id
        advertisement.timeoutTimer = Task { [weak self] in
            try? await Task.sleep(for: .seconds(Int(seconds)))
            guard !Task.isCancelled else { return }
            await self?.advertisementTimedOut(on: name, id: id)
        }
    }

    private func startDiscoverableTimeout(_ advertisement: RegisteredAdvertisement, on adapter: SimulatedAdapter) {
        advertisement.discoverableTimer?.cancel()
        advertisement.discoverableTimer = nil
        advertisement.discoverableTimedOut = false
        let seconds = advertisement.content.discoverableTimeout
        guard advertisement.content.discoverable == true, seconds > 0 else { return }
        let name = adapter.name
        let id = advertisement.id
        advertisement.discoverableTimer = Task { [weak self] in
            try? await Task.sleep(for: .seconds(Int(seconds)))
            guard !Task.isCancelled else { return }
            await self?.advertisementDiscoverableTimedOut(on: name, id: id)
        }
    }

    /// Timeout expired: bluetoothd calls Release, then drops the advertisement.
    func advertisementTimedOut(on name: String, id: UInt64) async {
        guard running, let adapter = adapters[name],
            let advertisement = adapter.advertisements.first(where: { $0.id == id })
        else { return }
        log.info("\(name): \(advertisement.path) timed out")
        release(advertisement)
        remove(advertisement, from: adapter)
        await writer.flush()
    }

    /// DiscoverableTimeout expired: the Flags go, the advertisement stays.
    func advertisementDiscoverableTimedOut(on name: String, id: UInt64) {
        guard running, let adapter = adapters[name],
            let advertisement = adapter.advertisements.first(where: { $0.id == id })
        else { return }
        advertisement.discoverableTimedOut = true
        transmit(advertisement, from: adapter)
    }

    // MARK: Live updates

    /// PropertiesChanged on an advertisement object: re-read and put the new
    /// data on the air. Data that no longer passes is refused and the old data
    /// stays on the air, as when bluetoothd's refresh fails.
    func advertisementChanged(on name: String, id: UInt64, changed: [String: DBusValue], invalidated: [String]) {
        guard running, let adapter = adapters[name],
            let advertisement = adapter.advertisements.first(where: { $0.id == id && $0.state == .active })
        else { return }
        var properties = advertisement.properties
        for (key, value) in changed { properties[key] = value }
        for key in invalidated { properties[key] = nil }
        advertisement.properties = properties
        let content: AdvertisementContent
        do throws(AdvertisementProblem) {
            content = try AdvertisementParser.parse(properties, maxLength: configuration.maxAdvertisingLength)
            try content.checkLength(
                maxLength: configuration.maxAdvertisingLength,
                adapterDiscoverable: adapter.switches.current.discoverable)
        } catch {
            log.info("\(name): update of \(advertisement.path) refused (\(error)); the old data stays on the air")
            return
        }
        let old = advertisement.content
        advertisement.content = content
        let touched = Set(changed.keys).union(invalidated)
        if touched.contains("Timeout") { startTimeout(advertisement, on: adapter) }
        if touched.contains("Discoverable") || touched.contains("DiscoverableTimeout") {
            startDiscoverableTimeout(advertisement, on: adapter)
        }
        if cannotStartWhileScanning(advertisement, on: adapter) {
            // The kernel restarts the advertisement with the new data and a new
            // address, the controller refuses the address: silently off the air.
            advertisement.offAir = true
            log.info("\(name): \(advertisement.path) data changed while scanning; off the air")
            return
        }
        if configuration.rotateOnUpdate && old.manufacturerData != content.manufacturerData {
            advertisement.address = .randomNonResolvable(using: &random)
            log.info("\(name): \(advertisement.path) data changed; new address \(advertisement.address)")
        } else {
            log.info("\(name): \(advertisement.path) data changed")
        }
        transmit(advertisement, from: adapter)
    }

    // MARK: Reading the object

    /// What bluetoothd's GDBusClient does: GetManagedObjects at the path first;
    /// if that does not list the object, Properties.GetAll on it.
    nonisolated func fetchAdvertisementProperties(owner: String, path: DBusObjectPath) async throws
        -> [String: DBusValue]
    {
        if let reply = try? await connection.call(
            destination: owner, path: path, interface: Self.objectManagerInterface, member: "GetManagedObjects"),
            let objects = reply.body.first?.dictionaryEntries
        {
            for (key, interfaces) in objects where key == .objectPath(path) {
                for (interface, properties) in interfaces.dictionaryEntries ?? []
                where interface == .string(Self.advertisementInterface) {
                    if let map = properties.vardict { return map }
                }
            }
        }
        let reply = try await connection.call(
            destination: owner, path: path, interface: Self.propertiesInterface, member: "GetAll",
            [.string(Self.advertisementInterface)])
        guard reply.body.count == 1, reply.body[0].type == .array(.dictEntry(key: .string, value: .variant)),
            let map = reply.body[0].vardict
        else { throw DBusError(.invalidArgs, "GetAll returned '\(reply.signature)'") }
        return map
    }

    /// Ends a signal subscription that will not be used (removing its match rule).
    static func discard(_ stream: AsyncThrowingStream<DBusMessage, Error>?) {
        guard let stream else { return }
        let task = Task {
            for try await _ in stream {}
        }
        task.cancel()
    }
}
