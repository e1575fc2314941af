import BlueZ
import DBus
import HandoffCore
import Synchronization

/// The offering laptop's "handoff pairing" GATT service (docs/pairing.md, section 2), registered with
/// bluetoothd for the length of one offer: written messages go to `onWrite` (which answers the write, or
/// refuses it with a `GattError`), and `send` queues the offerer's messages, cut into chunks, as
/// notifications sent in order.
final class PairingGattService: Sendable {
    typealias WriteHandler = @Sendable ([UInt8], GattRequestOptions) async throws -> Void

    static let applicationPath: DBusObjectPath = "/org/handoff/pairing"

    private let application: GattApplication
    private let outbox: AsyncStream<[[UInt8]]>.Continuation
    private let sender: Task<Void, Never>

    private init(application: GattApplication, outbox: AsyncStream<[[UInt8]]>.Continuation, sender: Task<Void, Never>) {
        self.application = application
        self.outbox = outbox
        self.sender = sender
    }

    /// Exports the service and registers it on the adapter the radio uses.
    static func start(bluez: BlueZContext, onWrite: @escaping WriteHandler) async throws -> PairingGattService {
        guard bluez.manager.isServicePresent, let adapter = bluez.adapter.choose(from: bluez.manager.adapters()) else {
            throw DBusError(.failed, "no Bluetooth adapter")
        }
        let toOfferer = LocalGattCharacteristic(
            uuid: PairingFormat.toOffererCharacteristicUUID, flags: [.write], onWrite: onWrite)
        let toJoiner = LocalGattCharacteristic(uuid: PairingFormat.toJoinerCharacteristicUUID, flags: [.notify])
        let application = try await GattApplication.export(
            [LocalGattService(uuid: PairingFormat.serviceUUID, characteristics: [toOfferer, toJoiner])],
            at: applicationPath, on: bluez.connection)
        do {
            try await application.register(on: adapter.path)
        } catch {
            await application.unexport()
            throw error
        }
        let (messages, outbox) = AsyncStream<[[UInt8]]>.makeStream()
        let characteristic = application.characteristic(PairingFormat.toJoinerCharacteristicUUID)
        let sender = Task {
            for await chunks in messages {
                for chunk in chunks { try? await characteristic?.notify(chunk) }
            }
        }
        return PairingGattService(application: application, outbox: outbox, sender: sender)
    }

    /// Queues one message for the joiner, in chunks for `mtu`.
    func send(_ message: [UInt8], session: UInt32, mtu: Int) {
        outbox.yield(ResponseChunks.split(message, session: session, mtu: mtu))
    }

    /// How long the service stays registered after the last notification was handed to bluetoothd,
    /// so that the notification leaves before the service goes (docs/pairing.md, section 5).
    static let lingering: Duration = .milliseconds(500)

    /// Sends what is queued (for at most a second), waits `lingering`, then unregisters the service
    /// and takes it off the bus.
    func close() async {
        outbox.finish()
        let sender = self.sender
        let drained = Task {
            try? await Task.sleep(for: .seconds(1))
            sender.cancel()
        }
        await sender.value
        drained.cancel()
        try? await Task.sleep(for: Self.lingering)
        await application.unexport()
    }
}
