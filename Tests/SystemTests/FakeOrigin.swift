import BlueZ
import DBus
import DBusTestSupport
import Foundation
import HandoffCore
import Synchronization

/// An origin device that is not handoffd: it holds the account key, advertises a
/// beacon B recognises, serves the continuation GATT service, and answers requests the
/// way `behaviour` says, also wrongly. B's checks are tested against it.
struct FakeOrigin {
    enum Behaviour: String, Sendable, CaseIterable, CustomStringConvertible {
        /// A correct response, its last byte (the Poly1305 tag) flipped.
        case tampered
        /// A correctly sealed activity of another type than the beacon's.
        case wrongType
        /// A correctly sealed activity whose requiredUserInfoKeys are not in its userInfo.
        case missingRequiredKey
        /// Refuses with status 5 (notCurrent).
        case refuses
        /// Accepts the write and never answers.
        case silent
        /// Takes streams (beacon `supportsStreams`), answers a request that takes them with a good activity
        /// and an offer for `streamPSM`, where nothing ever answers the stream's handshake.
        case offersAStreamItNeverOpens

        var description: String { rawValue }
    }

    static let type = "org.handoff.test.viewing"

    let connection: DBusConnection
    let application: GattApplication

    init(
        bus: PrivateBus, adapter: DBusObjectPath, account: AccountKey, epochSeconds: UInt32, behaviour: Behaviour,
        streamPSM: UInt16 = 0x0080
    ) async throws {
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        self.connection = connection
        let configuration = BeaconConfiguration(epochLength: epochSeconds, companyID: 0xFFFF)
        var encoder = BeaconEncoder(configuration: configuration)
        let now = Date().timeIntervalSince1970
        let type = try ActivityType(Self.type)
        let flags: BeaconFlags = behaviour == .offersAStreamItNeverOpens ? [.hasPayload, .supportsStreams] : [.hasPayload]
        let beacon = encoder.encode(account: account, activityType: type, flags: flags, now: now)
        var server = ContinuationServer(configuration: configuration)
        server.didAdvertise(beacon, account: account, activity: "fake", now: now)
        let state = Mutex(server)
        let box = Mutex<GattApplication?>(nil)
        let request = LocalGattCharacteristic(
            uuid: ContinuationFormat.requestCharacteristicUUID, flags: [.write],
            onWrite: { value, options in
                let checked: Result<ContinuationServer.Accepted, ExchangeStatus> = state.withLock { server in
                    do throws(ExchangeStatus) {
                        return .success(try server.accept(value, now: Date().timeIntervalSince1970))
                    } catch {
                        return .failure(error)
                    }
                }
                let accepted: ContinuationServer.Accepted
                switch checked {
                case .success(let value): accepted = value
                case .failure(let status): throw GattError.applicationError(0x80 | status.rawValue)
                }
                // Like a daemon from before introductions (docs/devices.md): refused as malformed.
                if accepted.requesterCard != nil { throw GattError.applicationError(0x80 | ExchangeStatus.malformed.rawValue) }
                let payload: ActivityPayload
                switch behaviour {
                case .refuses: throw GattError.applicationError(0x85)
                case .silent: return
                case .tampered, .missingRequiredKey:
                    payload = try ActivityPayload(
                        type: type, title: "Fake", userInfo: Array(#"{"x":1}"#.utf8),
                        requiredUserInfoKeys: behaviour == .missingRequiredKey ? ["tab"] : nil)
                case .offersAStreamItNeverOpens:
                    payload = try ActivityPayload(
                        type: type, title: "Fake", streamOffer: accepted.takesStreams ? try StreamOffer(psm: streamPSM) : nil)
                case .wrongType:
                    payload = try ActivityPayload(type: try ActivityType("org.handoff.test.other"), title: "Fake")
                }
                var response = state.withLock { $0.respond(to: accepted, with: payload) }
                if behaviour == .tampered { response[response.count - 1] ^= 0x01 }
                let characteristic = box.withLock { $0 }?.characteristic(ContinuationFormat.responseCharacteristicUUID)
                for chunk in ResponseChunks.split(response, session: accepted.session, mtu: Int(options.mtu ?? 23)) {
                    try await characteristic?.notify(chunk)
                }
            })
        let response = LocalGattCharacteristic(uuid: ContinuationFormat.responseCharacteristicUUID, flags: [.notify])
        let application = try await GattApplication.export(
            [LocalGattService(uuid: ContinuationFormat.serviceUUID, characteristics: [request, response])],
            at: "/org/handoff/fake", on: connection)
        box.withLock { $0 = application }
        self.application = application
        try await application.register(on: adapter)
        let advertisement = try await LEAdvertisement1.export(
            LEAdvertisementData(type: .peripheral, manufacturerData: [0xFFFF: beacon]), at: "/org/handoff/fake/adv",
            on: connection, onRelease: {})
        try await LEAdvertisingManager1.registerAdvertisement(advertisement.path, adapter: adapter, on: connection)
    }

    func stop() async {
        await application.unexport()
        await connection.close()
    }
}
