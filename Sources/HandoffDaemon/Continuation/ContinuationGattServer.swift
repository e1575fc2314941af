import BlueZ
import DBus
import HandoffCore
import Logging
import Synchronization

/// The origin side's GATT application (docs/continuation.md, section 2): the
/// "handoff continuation" service with its request and response
/// characteristics, exported once and kept registered with bluetoothd.
///
/// Like `LERadio`, it reconciles rather than sets up once (with the same
/// `Reconciler`): every change of bluetoothd's adapters (bluetoothd
/// restarting, the adapter going or a new one being chosen) triggers a pass
/// that registers the application (`GattManager1.RegisterApplication`) on the
/// adapter the radio uses. A pass that fails is retried with backoff.
///
/// What a written request means is the daemon's business: `onRequest` gets it
/// with the link's MTU and either throws (a `GattError` goes back as the
/// write's ATT error) or returns the notifications to send, which go out in
/// order after the write is answered.
actor ContinuationGattServer {
    /// Answers one written request: the notifications to send, and what to do once they are sent.
    typealias RequestHandler = @Sendable ([UInt8], GattRequestOptions) async throws -> ContinuationReply

    static let applicationPath: DBusObjectPath = "/org/handoff/gatt"

    let bluez: BlueZContext
    private let logger: Logger
    private let onRequest: RequestHandler
    private var application: GattApplication?
    /// The adapter bluetoothd has our application on, as far as we know.
    private var registeredOn: DBusObjectPath?
    private let reconciler = Reconciler()

    init(
        bluez: BlueZContext, logger: Logger, onRequest: @escaping RequestHandler
    ) {
        self.bluez = bluez
        self.logger = logger
        self.onRequest = onRequest
    }

    /// Exports the application and keeps it registered until the task is cancelled.
    func run() async {
        let (events, continuation) = AsyncStream<BlueZObjectManager.Event>.makeStream()
        let token = bluez.manager.observe { event in
            if Self.concernsRegistration(event) { continuation.yield(event) }
        }
        defer { token.cancel() }
        await reconcile()
        for await event in events {
            if Task.isCancelled { break }
            if case .serviceVanished = event { registeredOn = nil }
            if case .interfacesRemoved(let path, _) = event, path == registeredOn { registeredOn = nil }
            await reconcile()
        }
        await shutDown()
    }

    /// Unregisters the application and takes it off the bus.
    func shutDown() async {
        guard !reconciler.isStopped else { return }
        await reconciler.stopAfterPass()
        await application?.unexport()
        application = nil
        registeredOn = nil
    }

    /// Whether the application is registered with bluetoothd now (for tests and status).
    var isRegistered: Bool { registeredOn != nil }

    private static func concernsRegistration(_ event: BlueZObjectManager.Event) -> Bool {
        switch event {
        case .serviceAppeared, .serviceVanished: true
        case .interfacesAdded(_, let interfaces):
            interfaces[Adapter1.interface] != nil || interfaces[GattManager1.interface] != nil
        case .interfacesRemoved(_, let names): names.contains(Adapter1.interface)
        case .propertiesChanged(_, let interface, let changed, _, _):
            interface == Adapter1.interface && changed["Powered"] != nil
        }
    }

    // MARK: Reconciling

    private func reconcile() async {
        await reconciler.reconcile(retry: { [weak self] in await self?.reconcile() }) {
            try await pass()
        } failed: { error in
            logger.warning("continuation service not registered, retrying: \(error)")
        }
    }

    private func pass() async throws {
        guard bluez.manager.isServicePresent, let adapter = bluez.adapter.choose(from: bluez.manager.adapters()) else {
            registeredOn = nil
            return
        }
        if registeredOn == adapter.path { return }
        let application = try await exportedApplication()
        if let old = registeredOn {
            try? await application.unregister(from: old)
            registeredOn = nil
        }
        do {
            try await application.register(on: adapter.path)
        } catch let error as DBusError where error.is(.bluezAlreadyExists) {
            // Registered already (a reply we missed): that is what we want.
        }
        registeredOn = adapter.path
        logger.info("continuation service registered on \(adapter.interfaceName)")
    }

    private func exportedApplication() async throws -> GattApplication {
        if let application { return application }
        let handler = onRequest
        let log = logger
        let box = ApplicationBox()
        let request = LocalGattCharacteristic(
            uuid: ContinuationFormat.requestCharacteristicUUID, flags: [.write],
            onWrite: { value, options in
                let reply = try await handler(value, options)
                guard let response = box.application?.characteristic(ContinuationFormat.responseCharacteristicUUID)
                else {
                    await reply.completion(false)
                    return
                }
                // After the write is answered: the notifications follow it, in order.
                Task {
                    do {
                        for notification in reply.notifications { try await response.notify(notification) }
                        await reply.completion(true)
                    } catch {
                        log.warning("a continuation response could not be sent: \(error)")
                        await reply.completion(false)
                    }
                }
            })
        let response = LocalGattCharacteristic(uuid: ContinuationFormat.responseCharacteristicUUID, flags: [.notify])
        let application = try await GattApplication.export(
            [LocalGattService(uuid: ContinuationFormat.serviceUUID, characteristics: [request, response])],
            at: Self.applicationPath, on: bluez.connection)
        box.application = application
        self.application = application
        return application
    }
}

/// Lets the write handler reach the application it belongs to, which exists only after export.
private final class ApplicationBox: Sendable {
    private let value = Mutex<GattApplication?>(nil)
    var application: GattApplication? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
