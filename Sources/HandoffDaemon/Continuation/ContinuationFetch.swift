import BlueZ
import DBus
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol
import Synchronization

/// The continuing side's exchange over GATT with one origin device
/// (docs/continuation.md, section 1): connect to the device the beacon came
/// from, wait for its services, subscribe to the response, write the request
/// (a write request, acknowledged: a write command would lose the origin's
/// refusal), reassemble the notifications and open them.
///
/// `run` never outlives the deadline: whatever step is under way then decides
/// the failure (not connected yet: `out-of-range`; connected: `timeout`).
/// The link disconnects from every device it connected to, and removes them
/// later (bluetoothd keeps a remote device's objects after Disconnect until
/// RemoveDevice); see `GattContinuationLink`.
final class ContinuationFetch: Sendable {
    enum Phase: Sendable { case connecting, resolving, exchanging }

    let connection: DBusConnection
    let manager: BlueZObjectManager
    let timeout: Duration
    /// The Device1 that carried the activity's latest beacon (it changes when the origin's address does).
    let currentDevice: @Sendable () async -> DBusObjectPath?
    /// A fresh request (new nonce) for each attempt.
    let makeRequest: @Sendable () async -> PendingContinuation?
    /// Returns once an earlier fetch's disconnection from the device is over.
    let awaitDisconnection: @Sendable (DBusObjectPath) async -> Void
    /// Pause and resume our discovery around a Connect attempt: the kernel starts
    /// an LE connection only when no discovery runs (else it waits for the end of
    /// the discovery round, up to 10.24 s, as seen on the VM rig).
    let pauseDiscovery: @Sendable () async -> Void
    let resumeDiscovery: @Sendable () async -> Void
    /// Told each step as it is reached (for the debug log: where the time goes).
    let trace: @Sendable (String) -> Void
    /// One Connect attempt at most this long before trying the device's newest address.
    /// With our discovery paused, the kernel connects at the origin's next
    /// advertisement (100-150 ms apart); the pause must stay well short of the
    /// nearby expiry, since nothing is heard meanwhile.
    static let connectAttempt: Duration = .milliseconds(1500)
    /// How long, after ServicesResolved, the service's objects may take to appear.
    static let gattObjectsGrace: Duration = .seconds(2)
    /// Wait before asking a busy origin again.
    static let busyRetryDelay: Duration = .milliseconds(250)

    private let state = Mutex<(phase: Phase, touched: [(device: DBusObjectPath, adapter: DBusObjectPath?)])>(
        (.connecting, []))

    init(
        connection: DBusConnection, manager: BlueZObjectManager, timeout: Duration,
        currentDevice: @escaping @Sendable () async -> DBusObjectPath?,
        makeRequest: @escaping @Sendable () async -> PendingContinuation?,
        awaitDisconnection: @escaping @Sendable (DBusObjectPath) async -> Void,
        pauseDiscovery: @escaping @Sendable () async -> Void = {},
        resumeDiscovery: @escaping @Sendable () async -> Void = {},
        trace: @escaping @Sendable (String) -> Void = { _ in }
    ) {
        self.trace = trace
        self.awaitDisconnection = awaitDisconnection
        self.pauseDiscovery = pauseDiscovery
        self.resumeDiscovery = resumeDiscovery
        self.connection = connection
        self.manager = manager
        self.timeout = timeout
        self.currentDevice = currentDevice
        self.makeRequest = makeRequest
    }

    /// Fetches and opens the activity, within `timeout`.
    func run() async -> Result<ExchangeResponse, ContinueError> {
        let seconds = timeout.components.seconds
        do {
            return .success(
                try await withThrowingTaskGroup(of: ExchangeResponse?.self) { group in
                    group.addTask { try await self.fetch() }
                    group.addTask {
                        try await Task.sleep(for: self.timeout)
                        return nil
                    }
                    defer { group.cancelAll() }
                    if let payload = try await group.next() ?? nil { return payload }
                    switch state.withLock({ $0.phase }) {
                    case .connecting:
                        throw ContinueError(.outOfRange, "the origin device could not be connected to within \(seconds) s")
                    case .resolving:
                        throw ContinueError(.timeout, "the origin device's services were not found within \(seconds) s")
                    case .exchanging:
                        throw ContinueError(.timeout, "the origin device did not answer within \(seconds) s")
                    }
                })
        } catch let failure as ContinueError {
            return .failure(failure)
        } catch is CancellationError {
            return .failure(ContinueError(.cancelled, "cancelled"))
        } catch {
            return .failure(ContinueError(.outOfRange, "the exchange with the origin device failed: \(error)"))
        }
    }

    /// The devices `run` connected to (or tried to), with their adapters, handed over
    /// once: `GattContinuationLink` disconnects from them and later removes them.
    func takeTouched() -> [(device: DBusObjectPath, adapter: DBusObjectPath?)] {
        state.withLock { state in
            defer { state.touched.removeAll() }
            return state.touched
        }
    }

    // MARK: Steps

    private func fetch() async throws -> ExchangeResponse {
        while true {
            do {
                let device = try await connect()
                // Discovery stays paused until the exchange is over: on the origin's
                // side the link is busy with GATT discovery, and every advertisement
                // report our scan would add costs bluetoothd time it needs here.
                do {
                    let payload = try await exchange(with: device)
                    // Not waited for: the activity is handed over while discovery restarts.
                    Task { await self.resumeDiscovery() }
                    return payload
                } catch {
                    await resumeDiscovery()
                    throw error
                }
            } catch let error as DBusError where Self.isNotConnected(error) {
                // The link dropped under us (an earlier link still going down, the origin
                // moving away): connect again while there is time.
                trace("not connected (\(error.message)): connecting again")
                state.withLock { $0.phase = .connecting }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private func exchange(with device: DBusObjectPath) async throws -> ExchangeResponse {
        trace("connected")
        state.withLock { $0.phase = .resolving }
        // Disconnecting a link whose services have not resolved made bluetoothd 5.66 exit on the
        // VM rig (twice): however long they take, the link is kept until the timeout.
        try await manager.waitForServicesResolved(device, timeout: timeout)
        trace("services resolved")
        state.withLock { $0.phase = .exchanging }
        // bluetoothd may say ServicesResolved before the objects' InterfacesAdded arrive: wait for them a little.
        let manager = self.manager
        let find: @Sendable () -> [GattCharacteristic1]? = {
            guard let service = manager.gattService(uuid: ContinuationFormat.serviceUUID, of: device),
                let request = manager.gattCharacteristic(
                    uuid: ContinuationFormat.requestCharacteristicUUID, in: service.path),
                let response = manager.gattCharacteristic(
                    uuid: ContinuationFormat.responseCharacteristicUUID, in: service.path)
            else { return nil }
            return [request, response]
        }
        guard let found = await manager.first(within: Self.gattObjectsGrace, find) else {
            try Task.checkCancellation()
            throw ContinueError(.rejected, "the origin device does not offer handoff's continuation service")
        }
        let (request, response) = (found[0], found[1])
        let values = try await GattCharacteristic1.valueChanges(of: response.path, on: connection)
        try await GattCharacteristic1.startNotify(response.path, on: connection)
        trace("notifications on")
        while true {
            guard let pending = await makeRequest() else {
                throw ContinueError(.outOfRange, "the activity is no longer nearby")
            }
            do {
                try await GattCharacteristic1.writeValue(request.path, pending.request, type: .request, on: connection)
                trace("request written")
            } catch let error as DBusError {
                guard let status = Self.refusal(in: error) else {
                    if Self.isNotConnected(error) { throw error }
                    throw ContinueError(.outOfRange, "the request could not be sent: \(error.message)")
                }
                if status == .busy {
                    try await Task.sleep(for: Self.busyRetryDelay)
                    continue
                }
                throw ContinueError(.rejected, "the origin device refused: \(status)")
            }
            let whole: [UInt8]?
            do {
                whole = try await reassemble(values, session: pending.session, from: device)
            } catch let error as ExchangeError {
                throw ContinueError(.payloadInvalid, "the response was invalid: \(error)")
            }
            try Task.checkCancellation()
            guard let whole else { throw ContinueError(.outOfRange, "the origin device disconnected during the exchange") }
            trace("response complete (\(whole.count) bytes)")
            do {
                return try pending.openResponse(whole)
            } catch .refused(let status) {
                throw ContinueError(.rejected, "the origin device refused: \(status)")
            } catch {
                throw ContinueError(.payloadInvalid, "the response was invalid: \(error)")
            }
        }
    }

    /// Reassembles the response's notifications; nil when they end first. A link that
    /// drops meanwhile ends the wait at once (the notifications will not come), with
    /// the error `fetch` answers by connecting again.
    private func reassemble(
        _ values: AsyncThrowingStream<[UInt8], Error>, session: UInt32, from device: DBusObjectPath
    ) async throws -> [UInt8]? {
        let manager = self.manager
        return try await withThrowingTaskGroup(of: [UInt8]?.self) { group in
            group.addTask {
                var assembler = ChunkAssembler(session: session)
                for try await value in values {
                    if let complete = try assembler.add(value) { return complete }
                }
                return nil
            }
            group.addTask {
                // Only bluetoothd's own word that the link is down (or the device or bluetoothd
                // gone) ends the wait: on the VM rig, watching the mirror's Connected property
                // instead saw a drop that did not happen, and connecting again and again made
                // bluetoothd 5.66 exit.
                for await event in manager.events() {
                    switch event {
                    case .propertiesChanged(let path, let interface, let changed, _, _)
                    where path == device && interface == Device1.interface && changed["Connected"] == .boolean(false):
                        throw DBusError(.bluezNotConnected, "the link to \(device) dropped during the exchange")
                    case .interfacesRemoved(let path, let names) where path == device && names.contains(Device1.interface):
                        throw DBusError(.bluezNotConnected, "\(device) went away during the exchange")
                    case .serviceVanished:
                        throw DBusError(.bluezNotConnected, "bluetoothd left the bus during the exchange")
                    default:
                        continue
                    }
                }
                try Task.checkCancellation()
                throw DBusError(.bluezNotConnected, "the BlueZ mirror stopped during the exchange")
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
    }

    /// Connects to the device of the activity's newest beacon, trying again (the
    /// newest address) after a failed or slow attempt. Returns with our discovery
    /// paused (one `pauseDiscovery` for the caller to resume); between attempts
    /// discovery runs, so that a newer address can be heard.
    private func connect() async throws -> DBusObjectPath {
        while true {
            try Task.checkCancellation()
            guard let device = await currentDevice() else {
                throw ContinueError(.outOfRange, "the origin device is no longer heard")
            }
            let waitStart = ContinuousClock.now
            await awaitDisconnection(device)
            let waited = ContinuousClock.now - waitStart
            if waited > .milliseconds(50) { trace("waited \(waited) for an earlier link to \(device) to go") }
            // Removed after an earlier continuation: bluetoothd makes it again when it hears the
            // device; wait for that (or, after a while, look again for a newer beacon's device).
            guard let known = manager.device(device) else {
                trace("waiting to hear \(device) again")
                let manager = self.manager
                _ = await manager.first(within: .milliseconds(300)) { manager.device(device) }
                try Task.checkCancellation()
                continue
            }
            state.withLock { state in
                if !state.touched.contains(where: { $0.device == device }) {
                    state.touched.append((device, known.adapter))
                }
            }
            await pauseDiscovery()
            trace("connecting to \(device)")
            let outcome = await attempt(device)
            switch outcome {
            case .connected:
                return device
            case .cancelled:
                await resumeDiscovery()
                throw CancellationError()
            case .failed, .moved:
                await resumeDiscovery()
                // Cancels a pending attempt (bluetoothd keeps trying after our call ended).
                Task { try? await Device1.disconnect(device, on: connection) }
                try await Task.sleep(for: .milliseconds(100))
            }
        }
    }

    private enum Attempt: Sendable { case connected, failed, moved, cancelled }

    /// One Connect, given up after `connectAttempt` or as soon as a newer beacon came from another address.
    private func attempt(_ device: DBusObjectPath) async -> Attempt {
        await withTaskGroup(of: Attempt.self) { group in
            group.addTask {
                do {
                    try await Device1.connect(device, on: self.connection, timeout: Self.connectAttempt)
                    return .connected
                } catch let error as DBusError where error.is(.cancelled) {
                    return .cancelled
                } catch is CancellationError {
                    return .cancelled
                } catch {
                    return .failed
                }
            }
            group.addTask {
                while !Task.isCancelled {
                    try? await Task.sleep(for: .milliseconds(100))
                    if let newest = await self.currentDevice(), newest != device { return .moved }
                }
                return .cancelled
            }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            return first
        }
    }

    /// bluetoothd's ways of saying the link is down.
    static func isNotConnected(_ error: DBusError) -> Bool {
        error.is(.bluezNotConnected) || error.message.lowercased() == "not connected"
    }

    /// The status a refusal carries: "Operation failed with ATT error: 0x8N" → N.
    static func refusal(in error: DBusError) -> ExchangeStatus? {
        guard let code = GattError.applicationErrorCode(in: error), code & 0xF0 == 0x80 else { return nil }
        guard let status = ExchangeStatus(rawValue: code & 0x0F), status != .ok else { return nil }
        return status
    }
}
