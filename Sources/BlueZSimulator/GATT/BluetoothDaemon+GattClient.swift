import DBus

/// The client calls on remote characteristics, carried over the simulated
/// link to the other adapter's bluetoothd and on to the application that
/// registered the characteristic, with bluetoothd 5.66's rules on both ends
/// (src/gatt-client.c for the caller, src/shared/gatt-server.c and
/// src/gatt-database.c for the serving side). Checked on the VM rig.
extension BluetoothDaemon {
    /// The largest attribute value (`BT_ATT_MAX_VALUE_LEN`).
    static let maximumValueLength = 512

    /// The link a characteristic's device is connected over (also while it disconnects).
    func activeLink(for characteristic: RemoteCharacteristic) -> LELink? {
        gatt.links.first { link in
            link.state != .connecting
                && (link.centralDevice.path == characteristic.devicePath
                    || link.peripheralDevice?.path == characteristic.devicePath)
        }
    }

    /// The options the serving bluetoothd passes to the application: the
    /// caller's Device1 on the serving adapter, the link type, the MTU, and the
    /// offset when it is not zero.
    private func serverOptions(_ link: LELink, client: String, offset: UInt16) -> DBusValue {
        var options: [String: DBusValue] = ["link": .string("LE"), "mtu": .uint16(link.mtu)]
        if let server = link.peer(of: client), let device = link.device(on: server) {
            options["device"] = .objectPath(device.path)
        }
        if offset != 0 { options["offset"] = .uint16(offset) }
        return .vardict(options)
    }

    /// `offset` (q) and `type` (s) from a client's options; bluetoothd refuses other types for them.
    private func parseOptions(_ value: DBusValue) throws(DBusError) -> (offset: UInt16, type: String?) {
        var offset: UInt16 = 0
        var type: String?
        for (key, raw) in value.dictionaryEntries ?? [] {
            guard case .string(let name) = key else { continue }
            let inner = raw.unwrapped
            switch name.lowercased() {
            case "offset":
                guard case .uint16(let value) = inner else { throw BlueZError.invalidArguments() }
                offset = value
            case "type":
                guard case .string(let value) = inner else { throw BlueZError.invalidArguments() }
                type = value
            default:
                continue
            }
        }
        return (offset, type)
    }

    // MARK: ReadValue

    /// ReadValue: a read (and read blobs while the responses are full), at most
    /// 512 bytes in all; the cached Value is updated and signalled. A read at
    /// the offset of one under way joins it; at another offset it is refused.
    func remoteRead(_ path: DBusObjectPath, options: DBusValue) async throws(DBusError) -> [UInt8] {
        guard let characteristic = gatt.characteristics[path] else { throw BlueZError.doesNotExist() }
        guard activeLink(for: characteristic) != nil else { throw BlueZError.failed("Not connected") }
        let offset = try parseOptions(options).offset
        if let read = characteristic.read {
            guard read.offset == offset else { throw BlueZError.gattInProgress() }
            return try await read.task.value.get()
        }
        let task = Task { await self.performRead(path, offset: offset) }
        characteristic.read = (offset, task)
        let result = await task.value
        if characteristic.read?.task == task { characteristic.read = nil }
        return try result.get()
    }

    private func performRead(_ path: DBusObjectPath, offset start: UInt16) async -> Result<[UInt8], DBusError> {
        guard let characteristic = gatt.characteristics[path], let link = activeLink(for: characteristic) else {
            return .failure(BlueZError.failed("Not connected"))
        }
        guard characteristic.flags.readable else { return .failure(ATTError.clientError(ATTError.readNotPermitted)) }
        let mtu = Int(link.mtu)
        var result: [UInt8] = []
        var offset = Int(start)
        while true {
            let served: [UInt8]
            switch await serveRead(characteristic, link: link, offset: UInt16(clamping: offset)) {
            case .success(let bytes): served = bytes
            case .failure(let failure): return .failure(ATTError.clientError(failure.code))
            }
            // The response carries at most mtu - 1 bytes; the client keeps at most 512 in all.
            var chunk = Array(served.prefix(mtu - 1))
            if offset + chunk.count > Self.maximumValueLength {
                chunk = Array(chunk.prefix(max(0, Self.maximumValueLength - offset)))
            }
            result += chunk
            offset += chunk.count
            if chunk.count < mtu - 1 || offset >= Self.maximumValueLength { break }
        }
        guard gatt.characteristics[path] === characteristic else { return .failure(BlueZError.failed("Not connected")) }
        var cached = characteristic.value
        if Int(start) > cached.count { cached += Array(repeating: 0, count: Int(start) - cached.count) }
        cached = Array(cached.prefix(Int(start))) + result
        publishValue(characteristic, cached)
        await writer.flush()
        return .success(result)
    }

    /// One ATT read on the serving side: the application's ReadValue (or
    /// bluetoothd's own value), cut to 512 bytes, or an ATT error code.
    private func serveRead(_ characteristic: RemoteCharacteristic, link: LELink, offset: UInt16) async
        -> Result<[UInt8], ATTFailure>
    {
        switch characteristic.source {
        case .builtin:
            let value = characteristic.builtinValue
            guard Int(offset) <= value.count else { return .failure(ATTFailure(ATTError.invalidOffset)) }
            return .success(Array(value[Int(offset)...]))
        case .application(_, let owner, let appPath):
            let options = serverOptions(link, client: characteristic.clientAdapter, offset: offset)
            do {
                let reply = try await connection.call(
                    destination: owner, path: appPath, interface: Self.gattCharacteristicInterface,
                    member: "ReadValue", [options])
                guard reply.body.count == 1, let bytes = reply.body[0].bytes else {
                    return .failure(ATTFailure(ATTError.requestNotSupported))
                }
                return .success(Array(bytes.prefix(Self.maximumValueLength)))
            } catch let error as DBusError {
                return .failure(ATTFailure(ATTError.code(forApplicationError: error, permissionError: ATTError.readNotPermitted)))
            } catch {
                return .failure(ATTFailure(ATTError.unlikely))
            }
        }
    }

    // MARK: WriteValue

    /// WriteValue, choosing the procedure as bluetoothd does: reliable write,
    /// else a write request (a long write when over `mtu - 3` bytes or at an
    /// offset), else a write command; "Failed to initiate write" when the chosen
    /// procedure cannot start, NotSupported when none applies.
    func remoteWrite(_ path: DBusObjectPath, value: [UInt8], options: DBusValue) async throws(DBusError) {
        guard let characteristic = gatt.characteristics[path] else { throw BlueZError.doesNotExist() }
        guard let link = activeLink(for: characteristic) else { throw BlueZError.failed("Not connected") }
        guard !characteristic.writing else { throw BlueZError.gattInProgress() }
        let (offset, type) = try parseOptions(options)
        let kind = type?.lowercased()
        let properties = characteristic.flags.properties
        let mtu = Int(link.mtu)
        var supported = false
        if (kind == nil && characteristic.flags.reliableWrite) || kind == "reliable" {
            supported = true
            if !value.isEmpty { return try await acknowledgedWrite(characteristic, link, value, offset: offset, long: true) }
        }
        if (kind == nil && properties.contains(.write)) || kind == "request" {
            supported = true
            if value.count <= mtu - 3 && offset == 0 {
                return try await acknowledgedWrite(characteristic, link, value, offset: 0, long: false)
            }
            if !value.isEmpty { return try await acknowledgedWrite(characteristic, link, value, offset: offset, long: true) }
        }
        if (kind != nil && kind != "command") || offset != 0 || (kind == nil && !properties.contains(.writeWithoutResponse)) {
            throw supported ? BlueZError.failed("Failed to initiate write") : BlueZError.notSupported()
        }
        // Write Without Response: one PDU of at most mtu - 3 bytes, answered at once.
        guard value.count <= mtu - 3 else { throw BlueZError.failed("Failed to initiate write") }
        // bluetoothd 5.66's server counts the handle in the length: more than 510 bytes are dropped.
        guard characteristic.flags.writable, value.count + 2 <= Self.maximumValueLength else { return }
        deliverWrite(characteristic, link, value, offset: 0)
    }

    /// A write request, or a long (prepared) write joined into one application
    /// WriteValue at execution, with the serving side's checks.
    private func acknowledgedWrite(
        _ characteristic: RemoteCharacteristic, _ link: LELink, _ value: [UInt8], offset: UInt16, long: Bool
    ) async throws(DBusError) {
        characteristic.writing = true
        defer { characteristic.writing = false }
        guard characteristic.flags.writable else { throw ATTError.clientError(ATTError.writeNotPermitted) }
        if long {
            // Prepare Write requests of mtu - 5 bytes each; 5.66 counts the 4 header bytes in the length.
            let chunk = max(1, Int(link.mtu) - 5)
            var position = 0
            while position < value.count {
                let length = min(chunk, value.count - position) + 4
                let at = Int(offset) + position
                if length > Self.maximumValueLength || length + at > Self.maximumValueLength {
                    throw ATTError.clientError(ATTError.invalidAttributeValueLength)
                }
                if at > Self.maximumValueLength { throw ATTError.clientError(ATTError.invalidOffset) }
                position += chunk
            }
        } else if value.count + 2 > Self.maximumValueLength {
            // 5.66's write_cb counts the 2-byte handle too: at most 510 bytes.
            throw ATTError.clientError(ATTError.invalidAttributeValueLength)
        }
        switch characteristic.source {
        case .builtin:
            characteristic.builtinValue = value
        case .application(_, let owner, let appPath):
            if characteristic.flags.properties.contains(.writeWithoutResponse) {
                // bluetoothd answers at once and ignores the application's reply.
                deliverWrite(characteristic, link, value, offset: offset)
                return
            }
            let options = serverOptions(link, client: characteristic.clientAdapter, offset: offset)
            let reply: DBusMessage
            do {
                reply = try await connection.call(
                    destination: owner, path: appPath, interface: Self.gattCharacteristicInterface,
                    member: "WriteValue", [.bytes(value), options])
            } catch let error as DBusError {
                throw ATTError.clientError(
                    ATTError.code(forApplicationError: error, permissionError: ATTError.writeNotPermitted))
            } catch {
                throw ATTError.clientError(ATTError.unlikely)
            }
            // An application that answers WriteValue with a value does not implement it properly.
            if !reply.body.isEmpty { throw ATTError.clientError(ATTError.requestNotSupported) }
        }
    }

    /// Hands a write to the application without waiting for its reply, in order
    /// with the other calls this connection makes.
    private func deliverWrite(_ characteristic: RemoteCharacteristic, _ link: LELink, _ value: [UInt8], offset: UInt16) {
        switch characteristic.source {
        case .builtin:
            characteristic.builtinValue = value
        case .application(_, let owner, let appPath):
            var message = DBusMessage.methodCall(
                destination: owner, path: appPath, interface: Self.gattCharacteristicInterface, member: "WriteValue",
                body: [.bytes(value), serverOptions(link, client: characteristic.clientAdapter, offset: offset)])
            message.noReplyExpected = true
            do { try connection.send(message) } catch { log.error("cannot send WriteValue to \(owner): \(error)") }
        }
    }

    // MARK: Notifications

    /// StartNotify: one session per client; the first enables the CCC on the
    /// other side (its application gets StartNotify) and sets Notifying. While
    /// not connected the session is kept and registered on the next connection.
    func remoteStartNotify(_ path: DBusObjectPath, sender: String) async throws(DBusError) {
        guard let characteristic = gatt.characteristics[path] else { throw BlueZError.doesNotExist() }
        let link = activeLink(for: characteristic)
        if link?.state == .disconnecting { throw BlueZError.notConnected() }
        guard characteristic.flags.canNotify else { throw BlueZError.notSupported() }
        if characteristic.notifyClients.contains(sender) {
            // Registered already; while disconnected the registration is pending.
            guard link != nil else { throw BlueZError.gattInProgress() }
            return
        }
        characteristic.notifyClients.append(sender)
        watchClient(sender)
        guard link != nil else { return }
        subscribe(characteristic)
        publishNotifying(characteristic, true)
        await writer.flush()
    }

    /// StopNotify: ends this client's session; the last one disables the CCC.
    func remoteStopNotify(_ path: DBusObjectPath, sender: String) async throws(DBusError) {
        guard let characteristic = gatt.characteristics[path], characteristic.notifyClients.contains(sender) else {
            throw BlueZError.failed("No notify session started")
        }
        endNotifySession(of: sender, on: characteristic)
        await writer.flush()
    }

    func endNotifySession(of owner: String, on characteristic: RemoteCharacteristic) {
        characteristic.notifyClients.removeAll { $0 == owner }
        guard characteristic.notifyClients.isEmpty else { return }
        publishNotifying(characteristic, false)
        unsubscribe(characteristic)
    }

    /// Enables the CCC on the serving side: bluetoothd calls the application's
    /// StartNotify for every enable (no reply expected).
    func subscribe(_ characteristic: RemoteCharacteristic) {
        guard !characteristic.subscribed else { return }
        characteristic.subscribed = true
        guard case .application(let id, let owner, let appPath) = characteristic.source else { return }
        gatt.notifyCounts[.init(application: id, path: appPath), default: 0] += 1
        callApplication(owner, appPath, "StartNotify")
    }

    /// Disables the CCC; the application gets StopNotify when no device is left subscribed.
    func unsubscribe(_ characteristic: RemoteCharacteristic) {
        guard characteristic.subscribed else { return }
        characteristic.subscribed = false
        guard case .application(let id, let owner, let appPath) = characteristic.source else { return }
        let key = GattState.ApplicationCharacteristic(application: id, path: appPath)
        guard let count = gatt.notifyCounts[key] else { return }
        if count <= 1 {
            gatt.notifyCounts[key] = nil
            callApplication(owner, appPath, "StopNotify")
        } else {
            gatt.notifyCounts[key] = count - 1
        }
    }

    private func callApplication(_ owner: String, _ path: DBusObjectPath, _ member: String) {
        var message = DBusMessage.methodCall(
            destination: owner, path: path, interface: Self.gattCharacteristicInterface, member: member)
        message.noReplyExpected = true
        do { try connection.send(message) } catch { log.error("cannot send \(member) to \(owner): \(error)") }
    }

    /// An application changed a characteristic's Value: each connected device
    /// that enabled notifications gets it, cut to 512 bytes and to `mtu - 3`,
    /// as bluetoothd 5.66 does without telling anyone.
    func notify(from application: RegisteredApplication, characteristic record: GattCharacteristicRecord, _ bytes: [UInt8]) {
        let value = bytes.prefix(Self.maximumValueLength)
        let source = RemoteSource.application(id: application.id, owner: application.owner, path: record.path)
        for link in gatt.links where link.state != .connecting {
            guard let client = link.peer(of: application.adapter), let device = link.device(on: client),
                let view = gatt.views[device.path]
            else { continue }
            for characteristic in view.characteristics where characteristic.subscribed && characteristic.source == source {
                let chunk = Array(value.prefix(Int(link.mtu) - 3))
                guard let bearer = link.takeBearer() else { continue }
                let path = characteristic.path
                let id = link.id
                bearer.enqueue(at: .now + airLatency()) { [weak self] in
                    await self?.deliverNotification(chunk, to: path, link: id)
                }
            }
        }
    }

    /// A notification arrives at the client: the cached Value changes and is signalled.
    func deliverNotification(_ value: [UInt8], to path: DBusObjectPath, link id: UInt64) {
        guard running, gatt.links.contains(where: { $0.id == id }), let characteristic = gatt.characteristics[path],
            characteristic.subscribed
        else { return }
        publishValue(characteristic, value)
        if let limit = configuration.dropLinkAfterNotifications, !gatt.droppedALink {
            let count = gatt.deliveredNotifications[id, default: 0] + 1
            gatt.deliveredNotifications[id] = count
            if count >= limit, let link = gatt.links.first(where: { $0.id == id }) {
                gatt.droppedALink = true
                gatt.deliveredNotifications.removeAll()
                log.info("\(link.central): link to \(link.centralDevice.address) lost after \(count) notifications (drop link after notifications)")
                tearDown(link)
                link.dropped()
            }
        }
    }

    /// One draw from the configured air latency.
    func airLatency() -> Duration {
        let range = configuration.latency
        let low = Double(range.lowerBound.components.seconds) + Double(range.lowerBound.components.attoseconds) / 1e18
        let high = Double(range.upperBound.components.seconds) + Double(range.upperBound.components.attoseconds) / 1e18
        return .seconds(high > low ? Double.random(in: low...high, using: &random) : low)
    }
}
