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

    func fetch(_ job: ContinuationJob) async -> Result<ActivityPayload, ContinueError> {
        let fetch = ContinuationFetch(
            connection: bluez.connection, manager: bluez.manager, timeout: job.timeout,
            currentDevice: { await job.origin().flatMap { try? DBusObjectPath($0) } },
            makeRequest: job.request,
            awaitDisconnection: { [weak self] device in await self?.disconnection(of: device)?.value },
            pauseDiscovery: { [radio] in await radio.pauseDiscovery() },
            resumeDiscovery: { [radio] in await radio.resumeDiscovery() },
            trace: job.trace)
        let result = await fetch.run()
        // Not cancelled with the fetch: the link must go whatever happened.
        let cleanup = Task { await fetch.cleanUp() }
        let devices = fetch.touchedDevices
        for device in devices { disconnecting[device] = cleanup }
        Task {
            await cleanup.value
            self.endDisconnection(cleanup, of: devices)
        }
        return result
    }

    private func disconnection(of device: DBusObjectPath) -> Task<Void, Never>? { disconnecting[device] }

    private func endDisconnection(_ task: Task<Void, Never>, of devices: [DBusObjectPath]) {
        for device in devices where disconnecting[device] == task { disconnecting[device] = nil }
    }
}
