import BlueZ
import DBus
import HandoffCore
import HandoffProtocol
import Logging

/// Continuations over GATT through bluetoothd: the origin's "handoff
/// continuation" service (`ContinuationGattServer`) and the continuing side's
/// exchange (`ContinuationFetch`), on the radio's bus and adapter.
actor GattContinuationLink: ContinuationLink {
    let bluez: BlueZContext
    let radio: any Radio
    let logger: Logger
    /// Links being taken down after a fetch, by device: a new Connect waits for
    /// them, or bluetoothd would answer at once for the link that is going down.
    private var disconnecting: [DBusObjectPath: Task<Void, Never>] = [:]
    /// What happens to a device after a fetch, by device: the link is kept for
    /// `lingerDelay` (after a success), then disconnected, and the device removed
    /// `removalDelay` later. A new fetch of the device cancels what has not begun.
    /// Disconnecting and removing at once made a second continuation of the same
    /// activity (a retry, a second app) wait for the disconnection (2 s) and then
    /// for bluetoothd to hear the origin again: 7.8 s where the first took 0.1 s.
    private var releases: [DBusObjectPath: (id: UInt64, task: Task<Void, Never>, adapter: DBusObjectPath?)] = [:]
    private var nextRelease: UInt64 = 0
    /// Devices whose link is kept up after a fetch (`lingerDelay`), not yet going down.
    private var lingering: Set<DBusObjectPath> = []
    static let lingerDelay: Duration = .seconds(5)
    static let removalDelay: Duration = .seconds(30)

    init(bluez: BlueZContext, radio: any Radio, logger: Logger) {
        self.bluez = bluez
        self.radio = radio
        self.logger = logger
    }

    nonisolated func serve(_ handler: @escaping ContinuationRequestHandler) async {
        let server = ContinuationGattServer(bluez: bluez, logger: logger) { request, options in
            let context = ContinuationRequestContext(
                mtu: Int(options.mtu ?? UInt16(ContinuationFormat.minimumMTU)),
                peer: options.device?.rawValue ?? "an unknown device")
            do throws(ExchangeStatus) {
                return try await handler(request, context)
            } catch {
                throw Self.refusal(error)
            }
        }
        await server.run()
    }

    /// The write's error for a refusal: application error 0x80 + status, which the
    /// continuing side reads back from "Operation failed with ATT error: 0x8N".
    static func refusal(_ status: ExchangeStatus) -> DBusError {
        GattError.applicationError(0x80 | status.rawValue)
    }

    func fetch(_ job: ContinuationJob) async -> Result<ExchangeResponse, ContinueError> {
        let fetch = ContinuationFetch(
            connection: bluez.connection, manager: bluez.manager, timeout: job.timeout,
            currentDevice: { await job.origin().flatMap { try? DBusObjectPath($0) } },
            makeRequest: job.request,
            awaitDisconnection: { [weak self] device in
                for disconnection in await self?.reuse(device) ?? [] { await disconnection.value }
            },
            pauseDiscovery: { [radio] in await radio.pauseDiscovery() },
            resumeDiscovery: { [radio] in await radio.resumeDiscovery() },
            trace: job.trace)
        let result = await fetch.run()
        // The link is kept a while whenever it worked: after a success, and after a refusal or an
        // invalid answer (an introduction an older origin refused, say), since a continuation may follow.
        let linger: Duration =
            switch result {
            case .success: Self.lingerDelay
            case .failure(let failure) where failure.code == .rejected || failure.code == .payloadInvalid: Self.lingerDelay
            case .failure: .zero
            }
        for (device, adapter) in fetch.takeTouched() { release(device, adapter: adapter, after: linger) }
        return result
    }

    /// A fetch is about to use `device`: what was planned for it is off (the link may still be up).
    /// Every other device's link left up is taken down now, and the fetch waits for every
    /// disconnection under way, not only `device`'s: with private addresses another device
    /// object may be the same peer under its previous address, and on bluetoothd 5.66 a Connect
    /// to the new address while the old link went down "succeeded" at once, its services never
    /// resolved, and bluetoothd exited when that link dropped (seen on the VM rig).
    private func reuse(_ device: DBusObjectPath) -> [Task<Void, Never>] {
        releases.removeValue(forKey: device)?.task.cancel()
        lingering.remove(device)
        for other in lingering {
            guard let release = releases[other] else { continue }
            release.task.cancel()
            lingering.remove(other)
            disconnect(other, adapter: release.adapter)
        }
        return Array(disconnecting.values)
    }

    /// Takes the link to `device` down now, and removes the device `removalDelay` later.
    private func disconnect(_ device: DBusObjectPath, adapter: DBusObjectPath?) {
        nextRelease += 1
        let id = nextRelease
        let connection = bluez.connection
        let disconnection = Task { _ = try? await Device1.disconnect(device, on: connection) }
        disconnecting[device] = disconnection
        let task = Task {
            await disconnection.value
            self.endDisconnection(disconnection, of: [device])
            guard let adapter, (try? await Task.sleep(for: Self.removalDelay)) != nil else { return }
            try? await Adapter1.removeDevice(device, adapter: adapter, on: connection)
            if releases[device]?.id == id { releases[device] = nil }
        }
        releases[device] = (id, task, adapter)
    }

    /// Disconnects from `device` after `linger`, and removes it `removalDelay` later.
    private func release(_ device: DBusObjectPath, adapter: DBusObjectPath?, after linger: Duration) {
        releases[device]?.task.cancel()
        lingering.remove(device)
        guard linger > .zero else { return disconnect(device, adapter: adapter) }
        nextRelease += 1
        let id = nextRelease
        let task = Task {
            guard (try? await Task.sleep(for: linger)) != nil, releases[device]?.id == id else { return }
            lingering.remove(device)
            disconnect(device, adapter: adapter)
        }
        releases[device] = (id, task, adapter)
        lingering.insert(device)
    }

    private func endDisconnection(_ task: Task<Void, Never>, of devices: [DBusObjectPath]) {
        for device in devices where disconnecting[device] == task { disconnecting[device] = nil }
    }

}
