import DBus

extension BluetoothDaemon {
    /// The company ID flood reports use (reserved for testing).
    static let floodCompany: UInt16 = 0xFFFF
    /// The ManufacturerData length of flood reports.
    static let floodPayloadLength = 24

    /// Adds `deviceCount` fake devices to `adapterName` (InterfacesAdded), then
    /// emits Device1 PropertiesChanged (ManufacturerData and RSSI) for them in
    /// turn, `rate` per second (0: as fast as possible), `total` in all (0: until StopFlood).
    /// With `payloads`, device i always carries `payloads[i % payloads.count]`
    /// instead of the numbered pattern.
    func startFlood(
        on adapterName: String, devices deviceCount: UInt32, rate: UInt32, total: UInt64, payloads: [[UInt8]] = []
    ) async throws(DBusError) {
        let scanner = try adapter(adapterName)
        guard (1...65_536).contains(deviceCount) else {
            throw DBusError(.invalidArgs, "devices must be 1…65536")
        }
        stopFlood()
        var addresses: [DeviceAddress] = []
        var paths: [DBusObjectPath] = []
        for index in 0..<Int(deviceCount) {
            let address = DeviceAddress([0x3A, 0xF1, 0x0D, UInt8((index >> 16) & 0xFF), UInt8((index >> 8) & 0xFF), UInt8(index & 0xFF)])
            if let existing = scanner.devices[address] { removeDevice(existing, from: scanner) }
            let device = RemoteDevice(address: address, adapterPath: scanner.path)
            device.isFlood = true
            device.absorbFirst(
                AirReport(
                    advertiser: "flood", address: address, connectable: false, flags: AdvertisementContent.flagNoBREDR,
                    manufacturerData: [
                        .init(
                            company: Self.floodCompany,
                            bytes: payloads.isEmpty
                                ? Self.floodPayload(0, device: index) : payloads[index % payloads.count])
                    ],
                    serviceData: [], uuids: [], rssi: Self.floodRSSI(UInt64(index))))
            scanner.devices[address] = device
            export(device)
            addresses.append(address)
            paths.append(device.path)
        }
        await writer.flush()
        let generation = makeID()
        let connection = self.connection
        let stats = self.stats
        let log = self.log
        log.info("\(adapterName): flood of \(deviceCount) devices, \(rate == 0 ? "unpaced" : "\(rate)/s"), \(total == 0 ? "until stopped" : "\(total) reports")")
        let task = Task.detached { [weak self] in
            await Self.runFlood(
                connection: connection, paths: paths, rate: rate, total: total, payloads: payloads, stats: stats)
            await self?.floodFinished(generation: generation)
            log.info("\(adapterName): flood finished")
        }
        flood = FloodRun(adapter: adapterName, devices: addresses, task: task, generation: generation)
    }

    /// Stops a flood and removes its devices (InterfacesRemoved).
    func stopFlood() {
        guard let run = flood else { return }
        flood = nil
        run.task.cancel()
        guard let scanner = adapters[run.adapter] else { return }
        for address in run.devices {
            if let device = scanner.devices[address], device.isFlood { removeDevice(device, from: scanner) }
        }
    }

    /// A finished flood leaves its devices to expire like any temporary device.
    func floodFinished(generation: UInt64) {
        guard running, let run = flood, run.generation == generation, let scanner = adapters[run.adapter] else {
            return
        }
        flood?.finished = true
        for address in run.devices {
            if let device = scanner.devices[address] { startTemporaryTimer(device, on: scanner) }
        }
    }

    /// Emits the flood's signals, off the actor. The signals due at a moment (all
    /// of them, up to a batch, when unpaced) go to the connection's thread
    /// together, so that the emitter is not what limits an unpaced flood.
    static func runFlood(
        connection: DBusConnection, paths: [DBusObjectPath], rate: UInt32, total: UInt64, payloads: [[UInt8]] = [],
        stats: SimulatorStats
    ) async {
        let batchLimit: UInt64 = 64
        let clock = ContinuousClock()
        let start = clock.now
        var sent: UInt64 = 0
        var sinceCount: UInt64 = 0
        var batch: [DBusMessage] = []
        batch.reserveCapacity(Int(batchLimit))
        while total == 0 || sent < total {
            if Task.isCancelled { break }
            var due = batchLimit
            if rate > 0 {
                // The reports whose time has come: at least the next one.
                let elapsed = (clock.now - start) / .seconds(1)
                let owed = UInt64(max(0, elapsed * Double(rate))) + 1
                due = min(batchLimit, max(1, owed > sent ? owed - sent : 1))
            }
            if total > 0 { due = min(due, total - sent) }
            batch.removeAll(keepingCapacity: true)
            for number in sent..<(sent + due) {
                let device = Int(number % UInt64(paths.count))
                batch.append(
                    .signal(
                        path: paths[device], interface: propertiesInterface, member: "PropertiesChanged",
                        body: floodSignalBody(
                            number, device: device,
                            payload: payloads.isEmpty ? nil : payloads[device % payloads.count])))
            }
            do {
                try connection.send(contentsOf: batch)
            } catch {
                break
            }
            sent += due
            sinceCount += due
            if sinceCount >= 4096 {
                stats.update { $0.floodReportsSent += sinceCount }
                sinceCount = 0
                // A round trip to the bus keeps the outgoing queue from growing without bound.
                _ = try? await connection.call(
                    destination: DBusConnection.busName, path: DBusConnection.busPath,
                    interface: "org.freedesktop.DBus.Peer", member: "Ping")
            }
            if rate > 0 {
                let next = start + .seconds(Double(sent) / Double(rate))
                if next > clock.now + .milliseconds(1) { try? await clock.sleep(until: next) }
            }
        }
        stats.update { $0.floodReportsSent += sinceCount }
    }

    /// `(s "org.bluez.Device1", a{sv} {ManufacturerData, RSSI}, as [])`, built
    /// directly (it is built at the flood's rate): the same value as
    /// `.vardict(["ManufacturerData": .dictionary(…), "RSSI": .int16(…)])`, keys sorted.
    static func floodSignalBody(_ number: UInt64, device: Int, payload: [UInt8]? = nil) -> [DBusValue] {
        var bytes: [DBusValue] = []
        bytes.reserveCapacity(floodPayloadLength)
        for byte in payload ?? floodPayload(number, device: device) { bytes.append(.byte(byte)) }
        let manufacturerData = DBusValue.array(
            element: .dictEntry(key: .uint16, value: .variant),
            [.dictEntry(.uint16(floodCompany), .variant(.array(element: .byte, bytes)))])
        return [
            .string(RemoteDevice.interface),
            .array(
                element: .dictEntry(key: .string, value: .variant),
                [
                    .dictEntry(.string("ManufacturerData"), .variant(manufacturerData)),
                    .dictEntry(.string("RSSI"), .variant(.int16(floodRSSI(number)))),
                ]),
            .array(element: .string, []),
        ]
    }

    /// 24 bytes: the report number (big-endian), the device number, then a pattern.
    static func floodPayload(_ sequence: UInt64, device: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: floodPayloadLength)
        for i in 0..<8 { bytes[i] = UInt8((sequence >> (56 - 8 * UInt64(i))) & 0xFF) }
        bytes[8] = UInt8((device >> 16) & 0xFF)
        bytes[9] = UInt8((device >> 8) & 0xFF)
        bytes[10] = UInt8(device & 0xFF)
        for i in 11..<floodPayloadLength { bytes[i] = UInt8(truncatingIfNeeded: sequence &+ UInt64(i)) }
        return bytes
    }

    static func floodRSSI(_ sequence: UInt64) -> Int16 { -40 - Int16(sequence % 50) }
}

extension BluetoothDaemon {
    /// Stops a flood and waits until its devices are gone from the bus.
    func stopFloodAndWait() async {
        stopFlood()
        await writer.flush()
    }
}
