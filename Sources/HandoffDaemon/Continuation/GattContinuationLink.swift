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
    /// `lingerDelay` (after a success, if the job keeps links), then disconnected, and the device removed
    /// `removalDelay` later. A new fetch of the device cancels what has not begun.
    /// Disconnecting and removing at once made a second continuation of the same
    /// activity (a retry, a second app) wait for the disconnection (2 s) and then
    /// for bluetoothd to hear the origin again: 7.8 s where the first took 0.1 s.
    private var releases: [DBusObjectPath: (id: UInt64, task: Task<Void, Never>, adapter: DBusObjectPath?)] = [:]
    private var nextRelease: UInt64 = 0
    /// Links that continuation streams hold (`holdLink`), by device: how many, and the adapter to remove the
    /// device from once the last is released. Nothing is planned for them meanwhile.
    private var holds: [DBusObjectPath: (count: Int, adapter: DBusObjectPath?)] = [:]
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
            awaitDisconnection: { [weak self] device in await self?.reuse(device)?.value },
            pauseDiscovery: { [radio] in await radio.pauseDiscovery() },
            resumeDiscovery: { [radio] in await radio.resumeDiscovery() },
            trace: job.trace)
        let result = await fetch.run()
        var linger = Duration.zero
        if case .success = result, await job.keepsLink() { linger = Self.lingerDelay }
        for (device, adapter) in fetch.takeTouched() { release(device, adapter: adapter, after: linger) }
        return result
    }

    /// A fetch is about to use `device`: what was planned for it is off (the link may
    /// still be up); returns an earlier link's disconnection to wait for, if one is under way.
    private func reuse(_ device: DBusObjectPath) -> Task<Void, Never>? {
        releases.removeValue(forKey: device)?.task.cancel()
        return disconnecting[device]
    }

    func holdLink(_ device: String) {
        guard let path = try? DBusObjectPath(device) else { return }
        let planned = releases.removeValue(forKey: path)
        planned?.task.cancel()
        var hold = holds[path] ?? (0, nil)
        hold.count += 1
        hold.adapter = hold.adapter ?? planned?.adapter
        holds[path] = hold
    }

    func releaseLink(_ device: String) {
        guard let path = try? DBusObjectPath(device), var hold = holds[path] else { return }
        hold.count -= 1
        guard hold.count == 0 else {
            holds[path] = hold
            return
        }
        holds[path] = nil
        release(path, adapter: hold.adapter, after: Self.lingerDelay)
    }

    /// Disconnects from `device` after `linger`, and removes it `removalDelay` later; while a stream holds
    /// the link, only notes the adapter for the release after the last hold.
    private func release(_ device: DBusObjectPath, adapter: DBusObjectPath?, after linger: Duration) {
        if var hold = holds[device] {
            hold.adapter = adapter ?? hold.adapter
            holds[device] = hold
            return
        }
        releases[device]?.task.cancel()
        nextRelease += 1
        let id = nextRelease
        let connection = bluez.connection
        let task = Task {
            if linger > .zero { guard (try? await Task.sleep(for: linger)) != nil else { return } }
            // Not cancelled with the release: the link must go whatever happens next.
            let disconnection = Task { _ = try? await Device1.disconnect(device, on: connection) }
            disconnecting[device] = disconnection
            await disconnection.value
            self.endDisconnection(disconnection, of: [device])
            guard let adapter, (try? await Task.sleep(for: Self.removalDelay)) != nil else { return }
            try? await Adapter1.removeDevice(device, adapter: adapter, on: connection)
            if releases[device]?.id == id { releases[device] = nil }
        }
        releases[device] = (id, task, adapter)
    }

    private func endDisconnection(_ task: Task<Void, Never>, of devices: [DBusObjectPath]) {
        for device in devices where disconnecting[device] == task { disconnecting[device] = nil }
    }

}
