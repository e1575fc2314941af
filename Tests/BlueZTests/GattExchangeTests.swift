import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Synchronization
import Testing

/// A request/response exchange over GATT between two BlueZ-module clients on
/// hci0 and hci1 of the simulated BlueZ: the lowest layer of "continue an
/// activity" (issue 7). A serves a request characteristic (write) and a
/// response characteristic (notify); B finds A by its advertisement, connects,
/// subscribes, writes a request, and reads the response from the notifications.
@Suite(.serialized) struct GattExchangeTests {
    static let serviceUUID = "8f0c0000-5a1e-4c1e-9e0b-6e5f2a7d3c10"
    static let requestUUID = "8f0c0001-5a1e-4c1e-9e0b-6e5f2a7d3c10"
    static let responseUUID = "8f0c0002-5a1e-4c1e-9e0b-6e5f2a7d3c10"
    static let hci0: DBusObjectPath = "/org/bluez/hci0"
    static let hci1: DBusObjectPath = "/org/bluez/hci1"
    static let request = Array("GET".utf8)
    /// A response bigger than one notification: 3000 bytes.
    static let payload = (0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ $0 >> 8) }

    /// What A's handlers saw. Any thread.
    final class Record: Sendable {
        let writes = Mutex<[(value: [UInt8], options: GattRequestOptions)]>([])
        let application = Mutex<GattApplication?>(nil)
    }

    /// A: advertises connectably on hci0 and serves the exchange. Each
    /// notification carries `header(index)` then as much of the payload as fits.
    struct Server {
        let connection: DBusConnection
        let application: GattApplication
        let advertisement: LEAdvertisement1
        let record: Record

        init(bus: PrivateBus, header: @escaping @Sendable (Int) -> [UInt8]) async throws {
            let connection = try await DBusConnection.connect(to: .address(bus.address))
            self.connection = connection
            let record = Record()
            self.record = record
            let request = LocalGattCharacteristic(uuid: GattExchangeTests.requestUUID, flags: [.write], onWrite: {
                value, options in
                record.writes.withLock { $0.append((value, options)) }
                guard value == GattExchangeTests.request else { throw GattError.invalidValueLength("unknown request") }
                guard let limit = options.maximumNotificationLength,
                    let response = record.application.withLock({ $0 })?.characteristic(GattExchangeTests.responseUUID)
                else { throw GattError.failed("no response characteristic") }
                var offset = 0
                var index = 0
                while offset < GattExchangeTests.payload.count {
                    let head = header(index)
                    let end = min(GattExchangeTests.payload.count, offset + limit - head.count)
                    try await response.notify(head + GattExchangeTests.payload[offset..<end])
                    offset = end
                    index += 1
                }
            })
            let response = LocalGattCharacteristic(uuid: GattExchangeTests.responseUUID, flags: [.notify])
            let application = try await GattApplication.export(
                [LocalGattService(uuid: GattExchangeTests.serviceUUID, characteristics: [request, response])],
                at: "/org/handoff/gatt", on: connection)
            self.application = application
            record.application.withLock { $0 = application }
            try await application.register(on: GattExchangeTests.hci0)
            let advertisement = try await LEAdvertisement1.export(
                LEAdvertisementData(type: .peripheral, manufacturerData: [0xFFFF: [0xA0, 0x01]]),
                at: "/org/handoff/advertisement0", on: connection, onRelease: {})
            self.advertisement = advertisement
            try await LEAdvertisingManager1.registerAdvertisement(
                advertisement.path, adapter: GattExchangeTests.hci0, on: connection)
        }

        func stop() async {
            await application.unexport()
            await connection.close()
        }
    }

    /// B: scans hci1, finds A's advertisement, connects and resolves the service.
    struct Client {
        let connection: DBusConnection
        let manager: BlueZObjectManager
        let device: DBusObjectPath
        let request: GattCharacteristic1
        let response: GattCharacteristic1

        init(bus: PrivateBus) async throws {
            let connection = try await DBusConnection.connect(to: .address(bus.address))
            self.connection = connection
            let manager = try await BlueZObjectManager.start(on: connection)
            self.manager = manager
            try await Adapter1.setDiscoveryFilter(.handoff, adapter: GattExchangeTests.hci1, on: connection)
            try await Adapter1.startDiscovery(adapter: GattExchangeTests.hci1, on: connection)
            try await eventually {
                manager.devices(on: GattExchangeTests.hci1).contains { $0.manufacturerData[0xFFFF] == [0xA0, 0x01] }
            }
            let found = try #require(
                manager.devices(on: GattExchangeTests.hci1).first { $0.manufacturerData[0xFFFF] == [0xA0, 0x01] })
            let device = found.path
            self.device = device
            // The kernel connects only when no discovery runs (else at the end of the round).
            try await Adapter1.stopDiscovery(adapter: GattExchangeTests.hci1, on: connection)
            try await Device1.connect(device, on: connection, timeout: .seconds(10))
            try await manager.waitForServicesResolved(device, timeout: .seconds(10))
            // Found by UUID, whatever the case; the objects may follow ServicesResolved.
            let found3 = try #require(
                await manager.first(within: Duration.seconds(5)) { () -> (GattService1, GattCharacteristic1, GattCharacteristic1)? in
                    guard let service = manager.gattService(uuid: GattExchangeTests.serviceUUID.uppercased(), of: device),
                        let request = manager.gattCharacteristic(uuid: GattExchangeTests.requestUUID, in: service.path),
                        let response = manager.gattCharacteristic(uuid: GattExchangeTests.responseUUID, in: service.path)
                    else { return nil }
                    return (service, request, response)
                })
            #expect(found3.0.device == device)
            request = found3.1
            response = found3.2
        }

        /// Subscribes, writes the request, and collects notifications until `done` says so.
        func exchange(until done: @escaping @Sendable ([[UInt8]]) -> Bool) async throws -> [[UInt8]] {
            let values = try await GattCharacteristic1.valueChanges(of: response.path, on: connection)
            try await GattCharacteristic1.startNotify(response.path, on: connection)
            try await GattCharacteristic1.writeValue(
                request.path, GattExchangeTests.request, type: .request, on: connection)
            return try await withThrowingTaskGroup(of: [[UInt8]]?.self) { group in
                group.addTask {
                    var chunks: [[UInt8]] = []
                    for try await value in values {
                        chunks.append(value)
                        if done(chunks) { return chunks }
                    }
                    return nil
                }
                group.addTask {
                    try await Task.sleep(for: .seconds(10))
                    return nil
                }
                defer { group.cancelAll() }
                guard let chunks = try await group.next() ?? nil else {
                    throw TestFailure("the response did not arrive within 10 s")
                }
                return chunks
            }
        }

        func stop() async {
            manager.stop()
            await connection.close()
        }
    }

    static func received(_ chunks: [[UInt8]], header: Int) -> Int {
        chunks.reduce(0) { $0 + $1.count - header }
    }

    @Test func aResponseBiggerThanTheMTUArrivesInOrderOverOneBearer() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--att-channels", "1", "--disconnect-delay", "0.05"])
        let a = try await Server(bus: bus) { _ in [] }
        let b = try await Client(bus: bus)
        #expect(b.response.mtu == 517)
        #expect(b.response.canNotify)
        #expect(b.request.flags == [.write])

        let chunks = try await b.exchange { chunks in Self.received(chunks, header: 0) >= Self.payload.count }
        // 512 bytes a notification (min(MTU - 3, 512)), in order.
        #expect(chunks.map(\.count) == [512, 512, 512, 512, 512, 440])
        #expect(Array(chunks.joined()) == Self.payload)
        #expect(a.application.characteristic(Self.responseUUID)?.isNotifying == true)
        let writes = a.record.writes.withLock { $0 }
        #expect(writes.count == 1)
        #expect(writes.first?.value == Self.request)
        #expect(writes.first?.options.device == "/org/bluez/hci0/dev_00_AA_01_00_00_11")
        #expect(writes.first?.options.mtu == 517)
        #expect(writes.first?.options.link == "LE")

        // A refusal from A's handler reaches B in bluetoothd's terms.
        let refused = await #expect(throws: DBusError.self) {
            try await GattCharacteristic1.writeValue(b.request.path, [0xFF], on: b.connection)
        }
        #expect(refused?.is(.bluezInvalidArguments) == true)
        #expect(refused?.message == "Invalid Length")

        // B disconnects: A's characteristic stops notifying; the objects go with the device.
        try await Device1.disconnect(b.device, on: b.connection)
        #expect(b.manager.device(b.device)?.connected == false)
        let application = a.application
        try await eventually { application.characteristic(Self.responseUUID)?.isNotifying == false }
        try await Adapter1.removeDevice(b.device, adapter: Self.hci1, on: b.connection)
        let manager = b.manager
        let device = b.device
        try await eventually { manager.device(device) == nil && manager.gattServices(of: device).isEmpty }
        await b.stop()
        await a.stop()
        await sim.stop()
    }

    @Test func overSeveralBearersTheChunksAreReassembledByIndex() async throws {
        let bus = try PrivateBus()
        // Three ATT bearers, as bluetoothd's default: notifications may overtake each other.
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--disconnect-delay", "0.05", "--latency-ms", "1-15"])
        let a = try await Server(bus: bus) { index in [UInt8(index)] }
        let b = try await Client(bus: bus)
        let chunks = try await b.exchange { chunks in Self.received(chunks, header: 1) >= Self.payload.count }
        #expect(chunks.count == 6)
        #expect(Set(chunks.map { $0[0] }) == Set(0..<6))
        let reassembled = chunks.sorted { $0[0] < $1[0] }.flatMap { $0.dropFirst() }
        #expect(reassembled == Self.payload)
        try await Device1.disconnect(b.device, on: b.connection)
        await b.stop()
        await a.stop()
        await sim.stop()
    }

    @Test func waitingForServicesFailsWhenTheDeviceIsNotConnected() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus)
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let advertisement = try await LEAdvertisement1.export(
            LEAdvertisementData(type: .peripheral, manufacturerData: [0xFFFF: [0xB0]]), at: "/test/adv",
            on: connection, onRelease: {})
        try await LEAdvertisingManager1.registerAdvertisement(advertisement.path, adapter: Self.hci0, on: connection)
        let manager = try await BlueZObjectManager.start(on: connection)
        try await Adapter1.setDiscoveryFilter(.handoff, adapter: Self.hci1, on: connection)
        try await Adapter1.startDiscovery(adapter: Self.hci1, on: connection)
        try await eventually { manager.devices(on: Self.hci1).contains { $0.manufacturerData[0xFFFF] == [0xB0] } }
        let device = try #require(manager.devices(on: Self.hci1).first { $0.manufacturerData[0xFFFF] == [0xB0] })
        let error = await #expect(throws: DBusError.self) {
            try await manager.waitForServicesResolved(device.path, timeout: .milliseconds(300))
        }
        #expect(error?.is(.timeout) == true)
        #expect(manager.gattServices(of: device.path).isEmpty)
        manager.stop()
        await connection.close()
        await sim.stop()
    }

    @Test func applicationsBluetoothdWouldRefuseAreRefusedBeforeExport() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus)
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let noService = await #expect(throws: DBusError.self) {
            _ = try await GattApplication.export([], at: "/test/empty", on: connection)
        }
        #expect(noService?.is(.invalidArgs) == true)
        let badFlag = await #expect(throws: DBusError.self) {
            _ = try await GattApplication.export(
                [LocalGattService(uuid: Self.serviceUUID, characteristics: [
                    LocalGattCharacteristic(uuid: Self.requestUUID, flags: [.init(rawValue: "shout")])
                ])], at: "/test/flag", on: connection)
        }
        #expect(badFlag?.is(.invalidArgs) == true)
        #expect(badFlag?.message.contains("shout") == true)
        // A good one registers once; twice is AlreadyExists; after unexport the path is free again.
        let services = [
            LocalGattService(uuid: Self.serviceUUID, characteristics: [
                LocalGattCharacteristic(uuid: Self.responseUUID, flags: [.read]) { _ in [1, 2, 3] }
            ])
        ]
        let app = try await GattApplication.export(services, at: "/test/app", on: connection)
        try await app.register(on: Self.hci0)
        let twice = await #expect(throws: DBusError.self) { try await app.register(on: Self.hci0) }
        #expect(twice?.is(.bluezAlreadyExists) == true)
        #expect(app.registeredAdapters == [Self.hci0])
        await app.unexport()
        let again = try await GattApplication.export(services, at: "/test/app", on: connection)
        try await again.register(on: Self.hci0)
        await again.unexport()
        await connection.close()
        await sim.stop()
    }
}
