import BlueZ
import DBus
import DBusTestSupport
import Foundation
import HandoffCore
import Synchronization

/// A laptop (or a device in the middle) that is not handoffd: it advertises a pairing advertisement,
/// serves the pairing GATT service with a real `PairingOfferer`, and departs from docs/pairing.md the
/// way `behaviour` says. The joining handoffd's checks are tested against it.
final class FakeOfferer: Sendable {
    enum Behaviour: String, Sendable, CaseIterable, CustomStringConvertible {
        /// Reveals a nonce other than the one it committed to (what a device in the middle that
        /// wants to steer the number must do).
        case changesNonce
        /// Seals the account correctly, then flips a bit of it.
        case tamperedAccount

        var description: String { rawValue }
    }

    let connection: DBusConnection
    let application: GattApplication
    /// Every message the joiner wrote, in order.
    final class Log: Sendable {
        let messages = Mutex<[[UInt8]]>([])
    }
    let written = Log()

    init(bus: PrivateBus, adapter: DBusObjectPath, account: AccountKey, behaviour: Behaviour) async throws {
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        self.connection = connection
        var generator = SystemRandomNumberGenerator()
        let advertisement = PairingAdvertisement(using: &generator)
        let offerer = Mutex(PairingOfferer(advertisement: advertisement, account: account, using: &generator))
        let written = self.written
        let box = Mutex<GattApplication?>(nil)
        let toOfferer = LocalGattCharacteristic(
            uuid: PairingFormat.toOffererCharacteristicUUID, flags: [.write],
            onWrite: { value, options in
                written.messages.withLock { $0.append(value) }
                guard PairingFormat.failure(in: value) == nil else { return }
                let reply: [UInt8]? = try offerer.withLock { offerer in
                    var generator = SystemRandomNumberGenerator()
                    switch value[1] {
                    case PairingFormat.MessageType.start.rawValue:
                        return try offerer.receiveStart(value)
                    case PairingFormat.MessageType.nonceJ.rawValue:
                        var reply = try offerer.receiveNonce(value).reply
                        if behaviour == .changesNonce { reply[reply.count - 1] ^= 0x01 }
                        return reply
                    case PairingFormat.MessageType.confirm.rawValue:
                        _ = try offerer.receiveConfirm(value, using: &generator)
                        guard var account = try offerer.userConfirmed(using: &generator) else { return nil }
                        if behaviour == .tamperedAccount { account[20] ^= 0x01 }
                        return account
                    default:
                        return nil
                    }
                }
                guard let reply else { return }
                let characteristic = box.withLock { $0 }?.characteristic(PairingFormat.toJoinerCharacteristicUUID)
                let chunks = ResponseChunks.split(reply, session: advertisement.session, mtu: Int(options.mtu ?? 23))
                // After the write is answered, as handoffd does.
                Task { for chunk in chunks { try? await characteristic?.notify(chunk) } }
            })
        let toJoiner = LocalGattCharacteristic(uuid: PairingFormat.toJoinerCharacteristicUUID, flags: [.notify])
        let application = try await GattApplication.export(
            [LocalGattService(uuid: PairingFormat.serviceUUID, characteristics: [toOfferer, toJoiner])],
            at: "/org/handoff/fakepairing", on: connection)
        box.withLock { $0 = application }
        self.application = application
        try await application.register(on: adapter)
        let advertised = try await LEAdvertisement1.export(
            LEAdvertisementData(type: .peripheral, manufacturerData: [0xFFFF: advertisement.payload]),
            at: "/org/handoff/fakepairing/adv", on: connection, onRelease: {})
        try await LEAdvertisingManager1.registerAdvertisement(advertised.path, adapter: adapter, on: connection)
    }

    func stop() async {
        await application.unexport()
        await connection.close()
    }
}
