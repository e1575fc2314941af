import BlueZ
import DBus
import HandoffCore
import Synchronization

/// The joining laptop's GATT link to an offer (docs/pairing.md, section 2): connect to the device the
/// pairing advertisement came from, wait for its services, enable notifications of the to-joiner
/// characteristic, then write messages (write requests) and hand over each whole message from the
/// offerer's chunks. `close` disconnects and removes the device: bluetoothd keeps a remote device's
/// objects after a disconnect.
final class PairingJoinLink: Sendable {
    let connection: DBusConnection
    let manager: BlueZObjectManager
    let device: DBusObjectPath
    private let toOfferer = Mutex<DBusObjectPath?>(nil)
    private let reader = Mutex<Task<Void, Never>?>(nil)
    private let watch = Mutex<ObserverToken?>(nil)

    init(bluez: BlueZContext, device: DBusObjectPath) {
        connection = bluez.connection
        manager = bluez.manager
        self.device = device
    }

    /// Connects (trying again until `limit` has passed) and subscribes; the offerer's whole messages go to
    /// `deliver`, and `lost` is called
    /// when the link drops (the device disconnects or goes, or bluetoothd leaves), maybe more than once.
    func open(
        session: UInt32, within limit: Duration, deliver: @escaping @Sendable ([UInt8]) -> Void,
        lost: @escaping @Sendable () -> Void
    ) async throws {
        let deadline = ContinuousClock.now + limit
        while true {
            try Task.checkCancellation()
            guard ContinuousClock.now < deadline else { throw DBusError(.failed, "could not connect within \(limit)") }
            do {
                try await Device1.connect(
                    device, on: connection, timeout: max(.milliseconds(100), deadline - ContinuousClock.now))
                break
            } catch let error as DBusError where error.is(.bluezAlreadyConnected) {
                break
            } catch let error as DBusError where error.is(.cancelled) {
                throw CancellationError()
            } catch {
                try await Task.sleep(for: .milliseconds(300))
            }
        }
        try await manager.waitForServicesResolved(device, timeout: .seconds(10))
        let manager = self.manager
        let device = self.device
        guard
            let found = await manager.first(within: .seconds(2), { () -> [DBusObjectPath]? in
                guard let service = manager.gattService(uuid: PairingFormat.serviceUUID, of: device),
                    let write = manager.gattCharacteristic(
                        uuid: PairingFormat.toOffererCharacteristicUUID, in: service.path),
                    let notify = manager.gattCharacteristic(
                        uuid: PairingFormat.toJoinerCharacteristicUUID, in: service.path)
                else { return nil }
                return [write.path, notify.path]
            })
        else {
            try Task.checkCancellation()
            throw DBusError(.failed, "the other laptop does not offer handoff's pairing service")
        }
        let values = try await GattCharacteristic1.valueChanges(of: found[1], on: connection)
        try await GattCharacteristic1.startNotify(found[1], on: connection)
        toOfferer.withLock { $0 = found[0] }
        // The notifications' stream ends only with the bus connection: the link's end shows on the device.
        let token = manager.observe { event in
            switch event {
            case .propertiesChanged(let path, let interface, let changed, _, _)
            where path == device && interface == Device1.interface && changed["Connected"] == .boolean(false):
                lost()
            case .interfacesRemoved(let path, let names) where path == device && names.contains(Device1.interface):
                lost()
            case .serviceVanished:
                lost()
            default:
                break
            }
        }
        watch.withLock { $0 = token }
        reader.withLock {
            $0 = Task {
                var assembler = ChunkAssembler(session: session)
                do {
                    for try await value in values {
                        if let whole = try assembler.add(value) {
                            deliver(whole)
                            assembler = ChunkAssembler(session: session)
                        }
                    }
                } catch {}
                lost()
            }
        }
    }

    /// Writes one message (a write request).
    /// - Throws: `PairingError` from the peer for a refusal ("ATT error: 0x8N"), `DBusError` otherwise.
    func send(_ message: [UInt8]) async throws {
        guard let path = toOfferer.withLock({ $0 }) else { throw DBusError(.failed, "not connected") }
        do {
            try await GattCharacteristic1.writeValue(path, message, type: .request, on: connection)
        } catch let error as DBusError {
            if let code = Self.refusal(in: error) { throw PairingError(code, fromPeer: true) }
            throw error
        }
    }

    /// Disconnects and removes the device.
    func close() async {
        watch.withLock { $0?.cancel() }
        reader.withLock { $0?.cancel() }
        let adapter = manager.device(device)?.adapter
        try? await Device1.disconnect(device, on: connection)
        if let adapter { try? await Adapter1.removeDevice(device, adapter: adapter, on: connection) }
    }

    /// The code a refusal carries: "Operation failed with ATT error: 0x8N" → N.
    static func refusal(in error: DBusError) -> PairingFailure? {
        GattError.applicationErrorCode(in: error).flatMap { PairingFailure(rawValue: $0 - 0x80) }
    }
}
