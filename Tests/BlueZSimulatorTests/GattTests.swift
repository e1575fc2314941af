import BlueZSimulator
import DBus
import DBusTestSupport
import Testing

/// GattManager1 and the remote side of GATT, against the behaviour of
/// bluetoothd 5.66 recorded on the VM rig (see docs/simulator.md, "GATT").
@Suite struct GattTests {
    typealias H = SimulatorHarness
    static let gattManager = "org.bluez.GattManager1"
    static let characteristicInterface = "org.bluez.GattCharacteristic1"
    static let serviceInterface = "org.bluez.GattService1"
    static let requestUUID = "12345678-1234-5678-1234-56789abc0001"
    static let commandUUID = "12345678-1234-5678-1234-56789abc0002"
    static let responseUUID = "12345678-1234-5678-1234-56789abc0003"

    /// request (write), command (write-without-response), response (read, notify),
    /// at handles 0x0016, 0x0018 and 0x001a of the service at 0x0015, as on the rig.
    static let characteristics = [
        TestGattApplication.Characteristic(uuid: requestUUID, flags: ["write"]),
        TestGattApplication.Characteristic(uuid: commandUUID, flags: ["write-without-response"]),
        TestGattApplication.Characteristic(uuid: responseUUID, flags: ["read", "notify"]),
    ]

    static func fast(_ configuration: inout SimulatorConfiguration) {
        configuration.disconnectDelay = .milliseconds(20)
        configuration.attChannels = 1
    }

    static func register(_ h: H, _ app: TestGattApplication, on adapter: DBusObjectPath = H.hci0) async throws {
        try await h.call(
            adapter, gattManager, "RegisterApplication", [.objectPath(app.root), .vardict([:])], from: app.connection)
    }

    /// Advertises connectably from hci0, finds the device on hci1, connects and
    /// waits for ServicesResolved and the application's objects. Returns the
    /// Device1 path on hci1.
    static func connect(_ h: H, advertiser: DBusConnection, type: String = "peripheral") async throws -> DBusObjectPath {
        let device = try await discover(h, advertiser: advertiser, type: type)
        // Connect at once, as a careful client does: not while discovering (see
        // connectWaitsWhileTheCentralDiscovers).
        try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")
        try await h.call(device, H.deviceInterface, "Connect")
        try await eventually("ServicesResolved") {
            try await h.get(device, H.deviceInterface, "ServicesResolved") == .boolean(true)
        }
        // ServicesResolved may come before the objects (servicesResolvedFirst, as
        // bluetoothd 5.66 once did): wait for the application's, as a client must.
        let expected = try ["service0015", "service0015/char0016", "service0015/char001a"].map { try remote(device, $0) }
        try await eventually("the remote GATT objects") {
            let objects = try await h.managedObjects()
            return expected.allSatisfy { objects[$0] != nil }
        }
        return device
    }

    static func discover(_ h: H, advertiser: DBusConnection, type: String) async throws -> DBusObjectPath {
        let advertisement = try await TestAdvertisement(
            on: advertiser, path: "/test/adv", properties: TestAdvertisement.properties(type: type, data: [7, 7]))
        try await h.register(advertisement)
        try await h.scan(H.hci1)
        var found: DBusObjectPath?
        try await eventually("the advertiser on hci1") {
            found = try await h.devices(on: H.hci1).first { AirTests.manufacturerData($0.value) == [0xFFFF: [7, 7]] }?.key
            return found != nil
        }
        return try #require(found)
    }

    /// A peer serving `characteristics` on hci0 and advertising there, and hci1 connected to it.
    static func connectedApplication(_ h: H) async throws -> (DBusConnection, TestGattApplication, DBusObjectPath) {
        let peer = try await h.connect()
        let app = try await TestGattApplication(on: peer, characteristics: characteristics)
        try await register(h, app)
        return (peer, app, try await connect(h, advertiser: peer))
    }

    static func remote(_ device: DBusObjectPath, _ suffix: String) throws -> DBusObjectPath {
        try DBusObjectPath(device.rawValue + "/" + suffix)
    }

    // MARK: GattManager1

    @Test func registrationReadsTheTreeAndConnectedDevicesSeeIt() async throws {
        try await H.run(Self.fast) { h in
            let (peer, _, device) = try await Self.connectedApplication(h)
            let objects = try await h.managedObjects()
            // bluetoothd's own GATT and Device Information services, then the application's.
            let service = try Self.remote(device, "service0015")
            #expect(objects[try Self.remote(device, "service0008")]?[Self.serviceInterface]?["UUID"]
                == .string("00001801-0000-1000-8000-00805f9b34fb"))
            #expect(objects[try Self.remote(device, "service0012")]?[Self.serviceInterface]?["UUID"]
                == .string("0000180a-0000-1000-8000-00805f9b34fb"))
            let serviceProperties = try #require(objects[service]?[Self.serviceInterface])
            #expect(serviceProperties["UUID"] == .string(TestGattApplication.serviceUUID))
            #expect(serviceProperties["Device"] == .objectPath(device))
            #expect(serviceProperties["Primary"] == .boolean(true))
            let request = try #require(objects[try Self.remote(device, "service0015/char0016")]?[Self.characteristicInterface])
            #expect(request["UUID"] == .string(Self.requestUUID))
            #expect(request["Service"] == .objectPath(service))
            #expect(request["Flags"] == .strings(["write"]))
            #expect(request["MTU"] == .uint16(517))
            let command = try #require(objects[try Self.remote(device, "service0015/char0018")]?[Self.characteristicInterface])
            #expect(command["WriteAcquired"] == .boolean(false))
            let response = try #require(objects[try Self.remote(device, "service0015/char001a")]?[Self.characteristicInterface])
            #expect(response["Flags"] == .strings(["read", "notify"]))
            #expect(response["Notifying"] == .boolean(false))
            #expect(objects[try Self.remote(device, "service0015/char001a/desc001c")]?["org.bluez.GattDescriptor1"]?["UUID"]
                == .string("00002902-0000-1000-8000-00805f9b34fb"))
            let uuids = try await h.get(device, H.deviceInterface, "UUIDs").arrayElements?.compactMap(\.string) ?? []
            #expect(uuids.contains(TestGattApplication.serviceUUID))
            #expect(uuids.contains("00001800-0000-1000-8000-00805f9b34fb"))
            // The advertiser's side has a Device1 for the central, by hci1's public address.
            let central = try #require(objects["/org/bluez/hci0/dev_00_AA_01_00_00_11"]?[H.deviceInterface])
            #expect(central["AddressType"] == .string("public"))
            #expect(central["Connected"] == .boolean(true))
            #expect(try await h.get(device, H.deviceInterface, "Connected") == .boolean(true))
            await peer.close()
        }
    }

    @Test func badTreesAreRefusedAsBluetoothdDoes() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            func refusal(_ app: TestGattApplication) async -> DBusError? {
                await #expect(throws: DBusError.self) { try await Self.register(h, app) }
            }
            // No object manager at the path, and nothing at all.
            let bare = try await TestGattApplication(
                on: peer, root: "/test/bare", characteristics: Self.characteristics, objectManager: false)
            #expect(await refusal(bare) == DBusError(name: "org.bluez.Error.Failed", message: "No object received"))
            let nothing = await #expect(throws: DBusError.self) {
                try await h.call(
                    H.hci0, Self.gattManager, "RegisterApplication", [.objectPath("/test/nothing"), .vardict([:])],
                    from: peer)
            }
            #expect(nothing == DBusError(name: "org.bluez.Error.Failed", message: "No object received"))
            // A characteristic naming no service of the application; an unknown flag.
            let unknownFlag = try await TestGattApplication(
                on: peer, root: "/test/flag", characteristics: [.init(uuid: Self.requestUUID, flags: ["shout"])])
            #expect(
                await refusal(unknownFlag)
                    == DBusError(name: "org.bluez.Error.Failed", message: "No valid service object found"))
            // A service without UUID; a service with bluetoothd's own GAP UUID; no Primary.
            for (root, properties) in [
                ("/test/nouuid", ["Primary": DBusValue.boolean(true)]),
                ("/test/gap", ["UUID": .string("1800"), "Primary": .boolean(true)]),
                ("/test/noprimary", ["UUID": .string(TestGattApplication.serviceUUID)]),
            ] {
                let app = try await TestGattApplication(
                    on: peer, root: try DBusObjectPath(root), characteristics: Self.characteristics,
                    serviceProperties: properties)
                #expect(
                    await refusal(app)
                        == DBusError(name: "org.bluez.Error.Failed", message: "Failed to create entry in database"),
                    "\(root)")
            }
            // Registered twice; unregistered by someone else or twice.
            let good = try await TestGattApplication(on: peer, characteristics: Self.characteristics)
            try await Self.register(h, good)
            #expect(await refusal(good) == DBusError(name: "org.bluez.Error.AlreadyExists", message: "Already Exists"))
            let stranger = try await h.connect()
            let foreign = await #expect(throws: DBusError.self) {
                try await h.call(H.hci0, Self.gattManager, "UnregisterApplication", [.objectPath(good.root)], from: stranger)
            }
            #expect(foreign?.name == "org.bluez.Error.DoesNotExist")
            try await h.call(H.hci0, Self.gattManager, "UnregisterApplication", [.objectPath(good.root)], from: peer)
            let twice = await #expect(throws: DBusError.self) {
                try await h.call(H.hci0, Self.gattManager, "UnregisterApplication", [.objectPath(good.root)], from: peer)
            }
            #expect(twice?.name == "org.bluez.Error.DoesNotExist")
            // Once unregistered, the same path registers again.
            try await Self.register(h, good)
            await stranger.close()
            await peer.close()
        }
    }

    @Test func aServiceNamedByNoCharacteristicPathIsRefused() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            try await peer.addObjectManager(at: "/test/orphan")
            _ = try await peer.export(
                "/test/orphan/service0",
                interfaces: [
                    DBusInterface(
                        Self.serviceInterface,
                        properties: [
                            DBusProperty("UUID", TestGattApplication.serviceUUID), DBusProperty("Primary", true),
                        ])
                ])
            _ = try await peer.export(
                "/test/orphan/service0/char0",
                interfaces: [
                    DBusInterface(
                        Self.characteristicInterface,
                        properties: [
                            DBusProperty("UUID", Self.requestUUID),
                            DBusProperty("Service", DBusObjectPath("/test/elsewhere")),
                            DBusProperty("Flags", ["read"]),
                        ])
                ])
            let error = await #expect(throws: DBusError.self) {
                try await h.call(
                    H.hci0, Self.gattManager, "RegisterApplication", [.objectPath("/test/orphan"), .vardict([:])],
                    from: peer)
            }
            #expect(error == DBusError(name: "org.bluez.Error.Failed", message: "No valid service object found"))
            await peer.close()
        }
    }

    @Test func theOwnerLeavingDropsTheApplication() async throws {
        try await H.run(Self.fast) { h in
            let advertiser = try await h.connect()
            let owner = try await h.connect()
            let app = try await TestGattApplication(on: owner, characteristics: Self.characteristics)
            try await Self.register(h, app)
            let device = try await Self.connect(h, advertiser: advertiser)
            let service = try Self.remote(device, "service0015")
            #expect(try await h.managedObjects()[service] != nil)
            await owner.close()
            // The connected device loses the service (bluetoothd's Service Changed).
            try await eventually("the service to go") { try await h.managedObjects()[service] == nil }
            #expect(try await h.managedObjects()[try Self.remote(device, "service0008")] != nil)
            // The path is free again for another connection.
            let next = try await h.connect()
            let again = try await TestGattApplication(on: next, characteristics: Self.characteristics)
            try await Self.register(h, again)
            try await eventually("the service back") { try await h.managedObjects()[service] != nil }
            await next.close()
            await advertiser.close()
        }
    }

    // MARK: Connect and Disconnect

    @Test func disconnectKeepsTheObjectsUntilTheDeviceGoes() async throws {
        try await H.run(Self.fast) { h in
            let (peer, app, device) = try await Self.connectedApplication(h)
            let response = try Self.remote(device, "service0015/char001a")
            try await h.call(response, Self.characteristicInterface, "StartNotify")
            try await eventually("StartNotify at the application") { !app.calls("StartNotify").isEmpty }
            try await h.call(device, H.deviceInterface, "Disconnect")
            #expect(try await h.get(device, H.deviceInterface, "Connected") == .boolean(false))
            #expect(try await h.get(device, H.deviceInterface, "ServicesResolved") == .boolean(false))
            #expect(try await h.get("/org/bluez/hci0/dev_00_AA_01_00_00_11", H.deviceInterface, "Connected") == .boolean(false))
            try await eventually("StopNotify at the application") { !app.calls("StopNotify").isEmpty }
            // As on 5.66: the objects stay, calls on them fail, the session stays registered.
            #expect(try await h.managedObjects()[response] != nil)
            #expect(try await h.get(response, Self.characteristicInterface, "Notifying") == .boolean(true))
            let read = await #expect(throws: DBusError.self) {
                try await h.call(response, Self.characteristicInterface, "ReadValue", [.vardict([:])])
            }
            #expect(read == DBusError(name: "org.bluez.Error.Failed", message: "Not connected"))
            let restart = await #expect(throws: DBusError.self) {
                try await h.call(response, Self.characteristicInterface, "StartNotify")
            }
            #expect(restart?.name == "org.bluez.Error.InProgress")
            // Disconnect again: nothing to do.
            try await h.call(device, H.deviceInterface, "Disconnect")
            // Reconnecting registers the session again.
            try await h.call(device, H.deviceInterface, "Connect")
            try await eventually("StartNotify again") { app.calls("StartNotify").count == 2 }
            try await eventually("ServicesResolved again") {
                try await h.get(device, H.deviceInterface, "ServicesResolved") == .boolean(true)
            }
            // RemoveDevice disconnects and takes the objects with the device.
            try await h.call(H.hci1, H.adapterInterface, "RemoveDevice", [.objectPath(device)])
            let objects = try await h.managedObjects()
            #expect(objects.keys.filter { $0 == device || $0.isDescendant(of: device) }.isEmpty)
            try await eventually("StopNotify again") { app.calls("StopNotify").count == 2 }
            await peer.close()
        }
    }

    @Test func aDisconnectedDeviceExpiresWithItsObjects() async throws {
        try await H.run({
            Self.fast(&$0)
            $0.temporaryTimeout = .milliseconds(400)
        }) { h in
            // (Discovery is stopped already: the device is not refreshed by reports.)
            let (peer, _, device) = try await Self.connectedApplication(h)
            // Connected: no expiry.
            try await settle(.milliseconds(700))
            #expect(try await h.managedObjects()[try Self.remote(device, "service0015")] != nil)
            try await h.call(device, H.deviceInterface, "Disconnect")
            try await eventually("the device and its objects to expire") {
                try await h.managedObjects().keys.allSatisfy { $0 != device && !$0.isDescendant(of: device) }
            }
            try await eventually("the central's Device1 on hci0 to expire") {
                try await h.devices(on: H.hci0).isEmpty
            }
            await peer.close()
        }
    }

    @Test func connectToABroadcastAdvertiserDoesNotAnswer() async throws {
        try await H.run(Self.fast) { h in
            let peer = try await h.connect()
            let device = try await Self.discover(h, advertiser: peer, type: "broadcast")
            // bluetoothd waits for a connectable advertisement that never comes.
            let error = await #expect(throws: DBusError.self) {
                try await h.client.call(
                    destination: H.bluez, path: device, interface: H.deviceInterface, member: "Connect",
                    timeout: .milliseconds(500))
            }
            #expect(error?.is(.noReply) == true)
            // The attempt goes on after the caller gave up; Disconnect cancels it.
            try await h.call(device, H.deviceInterface, "Disconnect")
            // A second Connect while one is pending; Disconnect cancels the first.
            let client = h.client
            let pending = Task {
                try await client.call(
                    destination: H.bluez, path: device, interface: H.deviceInterface, member: "Connect",
                    timeout: .seconds(10))
            }
            try await settle(.milliseconds(100))
            let again = await #expect(throws: DBusError.self) {
                try await h.call(device, H.deviceInterface, "Connect")
            }
            #expect(again == DBusError(name: "org.bluez.Error.Failed", message: "Operation already in progress"))
            try await h.call(device, H.deviceInterface, "Disconnect")
            let cancelled = await #expect(throws: DBusError.self) { try await pending.value }
            #expect(cancelled == DBusError(name: "org.bluez.Error.Failed", message: "br-connection-canceled"))
            #expect(try await h.get(device, H.deviceInterface, "Connected") == .boolean(false))
            await peer.close()
        }
    }

    /// As on the VM rig: the kernel starts an LE connection only when no
    /// discovery runs, so Connect from a discovering adapter waits for the end
    /// of the discovery round (a rescan here) or for StopDiscovery.
    @Test func connectWaitsWhileTheCentralDiscovers() async throws {
        try await H.run({ Self.fast(&$0); $0.rescanInterval = .seconds(30) }) { h in
            let peer = try await h.connect()
            let device = try await Self.discover(h, advertiser: peer, type: "peripheral")
            #expect(try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(true))
            let client = h.client
            let connecting = Task {
                try await client.call(
                    destination: H.bluez, path: device, interface: H.deviceInterface, member: "Connect",
                    timeout: .seconds(10))
            }
            try await settle(.milliseconds(500))
            #expect(try await h.get(device, H.deviceInterface, "Connected") == .boolean(false))
            try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")
            _ = try await connecting.value
            #expect(try await h.get(device, H.deviceInterface, "Connected") == .boolean(true))
            await peer.close()
        }
    }

    @Test func theConnectTimeoutOptionFailsTheAttempt() async throws {
        try await H.run({ $0.connectTimeout = .milliseconds(200) }) { h in
            let peer = try await h.connect()
            let device = try await Self.discover(h, advertiser: peer, type: "broadcast")
            let error = await #expect(throws: DBusError.self) { try await h.call(device, H.deviceInterface, "Connect") }
            #expect(error == DBusError(name: "org.bluez.Error.Failed", message: "le-connection-abort-by-local"))
            await peer.close()
        }
    }

    // MARK: Reads and writes

    @Test func readsAndWritesReachTheApplicationWithBluetoothdsOptions() async throws {
        try await H.run(Self.fast) { h in
            let (peer, app, device) = try await Self.connectedApplication(h)
            let request = try Self.remote(device, "service0015/char0016")
            let command = try Self.remote(device, "service0015/char0018")
            let response = try Self.remote(device, "service0015/char001a")
            let expectedOptions: [String: DBusValue] = [
                "device": .objectPath("/org/bluez/hci0/dev_00_AA_01_00_00_11"), "link": "LE", "mtu": .uint16(517),
            ]

            try await h.call(request, Self.characteristicInterface, "WriteValue", [.bytes([1, 2, 3]), .vardict([:])])
            let write = try #require(app.calls("WriteValue").last)
            #expect(write.path == app.characteristicPaths[0])
            #expect(write.value == [1, 2, 3])
            #expect(write.options == expectedOptions)
            #expect(!write.noReplyExpected)

            app.setReadValue(Array(0..<100))
            let values = try await SignalLog(
                h.client, DBusMatchRule(sender: H.bluez, interface: H.properties, member: "PropertiesChanged", path: response))
            let read = try await h.call(response, Self.characteristicInterface, "ReadValue", [.vardict([:])])
            #expect(read.body.first?.bytes == Array(0..<100))
            #expect(app.calls("ReadValue").last?.options == expectedOptions)
            // A read updates the cached Value, with a signal.
            #expect(try await h.get(response, Self.characteristicInterface, "Value") == .bytes(Array(0..<100)))
            try await eventually("the Value signal") { values.count { $0.body.count == 3 && $0.body[1].vardict?["Value"] != nil } == 1 }
            let offset = try await h.call(
                response, Self.characteristicInterface, "ReadValue", [.vardict(["offset": .uint16(40)])])
            #expect(offset.body.first?.bytes == Array(40..<100))
            #expect(app.calls("ReadValue").last?.options["offset"] == .uint16(40))

            // A command: answered at once, delivered without a reply expected.
            try await h.call(command, Self.characteristicInterface, "WriteValue", [.bytes([9]), .vardict([:])])
            try await eventually("the command at the application") {
                app.calls("WriteValue").contains { $0.path == app.characteristicPaths[1] && $0.value == [9] }
            }
            #expect(app.calls("WriteValue").last?.noReplyExpected == true)
            // Type "command" on a write-only characteristic is sent; an unknown type is not supported.
            try await h.call(
                request, Self.characteristicInterface, "WriteValue", [.bytes([5]), .vardict(["type": "command"])])
            try await eventually("the typed command") { app.calls("WriteValue").contains { $0.value == [5] } }
            let bogus = await #expect(throws: DBusError.self) {
                try await h.call(
                    request, Self.characteristicInterface, "WriteValue", [.bytes([6]), .vardict(["type": "bogus"])])
            }
            #expect(bogus == DBusError(name: "org.bluez.Error.NotSupported", message: "Operation is not supported"))
            // Reading a write-only characteristic.
            let notReadable = await #expect(throws: DBusError.self) {
                try await h.call(request, Self.characteristicInterface, "ReadValue", [.vardict([:])])
            }
            #expect(notReadable == DBusError(name: "org.bluez.Error.NotPermitted", message: "Read not permitted"))
            await peer.close()
        }
    }

    @Test func applicationErrorsComeBackAsBluetoothdMapsThem() async throws {
        try await H.run(Self.fast) { h in
            let (peer, app, device) = try await Self.connectedApplication(h)
            let request = try Self.remote(device, "service0015/char0016")
            let command = try Self.remote(device, "service0015/char0018")
            // What the application throws → what the remote caller gets (all seen on the rig).
            let cases: [(DBusError, DBusError)] = [
                (.init(name: "org.bluez.Error.InvalidValueLength", message: "x"),
                 .init(name: "org.bluez.Error.InvalidArguments", message: "Invalid Length")),
                (.init(name: "org.bluez.Error.Failed", message: "0x80"),
                 .init(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x80")),
                (.init(name: "org.bluez.Error.Failed", message: "0x9f"),
                 .init(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x9f")),
                (.init(name: "org.bluez.Error.Failed", message: "boom"),
                 .init(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x80")),
                (.init(name: "org.bluez.Error.NotPermitted", message: "x"),
                 .init(name: "org.bluez.Error.NotPermitted", message: "Write not permitted")),
                (.init(name: "org.bluez.Error.NotSupported", message: "x"),
                 .init(name: "org.bluez.Error.NotSupported", message: "Operation is not supported")),
                (.init(name: "org.bluez.Error.NotAuthorized", message: "x"),
                 .init(name: "org.bluez.Error.NotAuthorized", message: "Operation Not Authorized")),
                (.init(name: "org.bluez.Error.InProgress", message: "x"),
                 .init(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0xfe")),
                (.init(name: "org.bluez.Error.InvalidOffset", message: "x"),
                 .init(name: "org.bluez.Error.InvalidArguments", message: "Invalid offset")),
                (.init(name: "com.example.Error.Oops", message: "x"),
                 .init(name: "org.bluez.Error.Failed", message: "Operation failed with ATT error: 0x0e")),
            ]
            for (thrown, expected) in cases {
                app.setWriteError(thrown)
                let error = await #expect(throws: DBusError.self) {
                    try await h.call(request, Self.characteristicInterface, "WriteValue", [.bytes([1]), .vardict([:])])
                }
                #expect(error == expected, "\(thrown.name) \(thrown.message)")
            }
            // A write-without-response characteristic: bluetoothd does not wait, so no error comes back.
            try await h.call(command, Self.characteristicInterface, "WriteValue", [.bytes([1]), .vardict([:])])
            await peer.close()
        }
    }

    @Test func valuesOverTheLimitsAreRefusedAsOn566() async throws {
        try await H.run(Self.fast) { h in
            let (peer, app, device) = try await Self.connectedApplication(h)
            let request = try Self.remote(device, "service0015/char0016")
            let command = try Self.remote(device, "service0015/char0018")
            let response = try Self.remote(device, "service0015/char001a")
            func write(_ path: DBusObjectPath, _ count: Int) async throws {
                try await h.call(
                    path, Self.characteristicInterface, "WriteValue",
                    [.bytes(Array(repeating: UInt8(count & 0xFF), count: count)), .vardict([:])])
            }
            // 5.66 counts the handle in the length: 510 bytes is the most one write request carries.
            try await write(request, 510)
            #expect(app.calls("WriteValue").last?.value?.count == 510)
            for count in [511, 514, 600] {
                let error = await #expect(throws: DBusError.self) { try await write(request, count) }
                #expect(error == DBusError(name: "org.bluez.Error.InvalidArguments", message: "Invalid Length"), "\(count)")
            }
            #expect(app.calls("WriteValue").count == 1)
            // A command over MTU - 3 cannot start; 511…514 bytes start but the server drops them.
            let tooLong = await #expect(throws: DBusError.self) { try await write(command, 515) }
            #expect(tooLong == DBusError(name: "org.bluez.Error.Failed", message: "Failed to initiate write"))
            try await write(command, 511)
            try await write(command, 510)
            try await eventually("the 510-byte command") { app.calls("WriteValue").count == 2 }
            #expect(app.calls("WriteValue").last?.value?.count == 510)
            // A read keeps at most 512 bytes of the application's value.
            app.setReadValue(Array(repeating: 3, count: 600))
            let read = try await h.call(response, Self.characteristicInterface, "ReadValue", [.vardict([:])])
            #expect(read.body.first?.bytes?.count == 512)
            await peer.close()
        }
    }

    @Test func aSmallMTUUsesLongReadsAndWrites() async throws {
        try await H.run({
            Self.fast(&$0)
            $0.attMTU = 23
        }) { h in
            let (peer, app, device) = try await Self.connectedApplication(h)
            let request = try Self.remote(device, "service0015/char0016")
            let response = try Self.remote(device, "service0015/char001a")
            #expect(try await h.get(request, Self.characteristicInterface, "MTU") == .uint16(23))
            // 100 bytes > MTU - 3: prepared writes of 18 bytes, joined into one WriteValue.
            try await h.call(
                request, Self.characteristicInterface, "WriteValue", [.bytes(Array(0..<100)), .vardict([:])])
            #expect(app.calls("WriteValue").map(\.value) == [Array(0..<100)])
            #expect(app.calls("WriteValue").last?.options["mtu"] == .uint16(23))
            // A long read asks again at growing offsets while responses are full (22 bytes).
            app.setReadValue(Array(0..<50))
            let read = try await h.call(response, Self.characteristicInterface, "ReadValue", [.vardict([:])])
            #expect(read.body.first?.bytes == Array(0..<50))
            #expect(app.calls("ReadValue").map { $0.options["offset"] } == [nil, .uint16(22), .uint16(44)])
            // Notifications are cut to MTU - 3 = 20 bytes.
            try await h.call(response, Self.characteristicInterface, "StartNotify")
            let values = try await SignalLog(
                h.client, DBusMatchRule(sender: H.bluez, interface: H.properties, member: "PropertiesChanged", path: response))
            try app.notify(2, Array(0..<30))
            try await eventually("the notification") {
                values.all.contains { $0.body.count == 3 && $0.body[1].vardict?["Value"] != nil }
            }
            #expect(values.all.compactMap { $0.body[1].vardict?["Value"]?.bytes } == [Array(0..<20)])
            await peer.close()
        }
    }

    // MARK: Notifications

    @Test func notificationsFollowStartAndStopNotify() async throws {
        try await H.run(Self.fast) { h in
            let (peer, app, device) = try await Self.connectedApplication(h)
            let request = try Self.remote(device, "service0015/char0016")
            let response = try Self.remote(device, "service0015/char001a")
            let values = try await SignalLog(
                h.client, DBusMatchRule(sender: H.bluez, interface: H.properties, member: "PropertiesChanged", path: response))
            func received() -> [[UInt8]] { values.all.compactMap { $0.body.count == 3 ? $0.body[1].vardict?["Value"]?.bytes : nil } }

            // Not subscribed: nothing arrives.
            try app.notify(2, [1])
            try await settle(.milliseconds(200))
            #expect(received().isEmpty)
            let noSession = await #expect(throws: DBusError.self) {
                try await h.call(response, Self.characteristicInterface, "StopNotify")
            }
            #expect(noSession == DBusError(name: "org.bluez.Error.Failed", message: "No notify session started"))
            let cannot = await #expect(throws: DBusError.self) {
                try await h.call(request, Self.characteristicInterface, "StartNotify")
            }
            #expect(cannot?.name == "org.bluez.Error.NotSupported")

            try await h.call(response, Self.characteristicInterface, "StartNotify")
            try await h.call(response, Self.characteristicInterface, "StartNotify")  // same client: nothing new
            #expect(try await h.get(response, Self.characteristicInterface, "Notifying") == .boolean(true))
            try await eventually("StartNotify at the application") { app.calls("StartNotify").count == 1 }
            // Each Value signal is a notification, repeats included; 600 bytes arrive as 512.
            try app.notify(2, [2])
            try app.notify(2, [2])
            try app.notify(2, Array(repeating: 4, count: 600))
            try await eventually("three notifications") { received().count == 3 }
            #expect(received() == [[2], [2], Array(repeating: 4, count: 512)])
            // With one ATT bearer, a burst arrives in order.
            for index in 0..<50 { try app.notify(2, [UInt8(index), 0xAA]) }
            try await eventually("the burst") { received().count == 53 }
            #expect(received().dropFirst(3).map { $0[0] } == (0..<50).map(UInt8.init))

            try await h.call(response, Self.characteristicInterface, "StopNotify")
            #expect(try await h.get(response, Self.characteristicInterface, "Notifying") == .boolean(false))
            try await eventually("StopNotify at the application") { app.calls("StopNotify").count == 1 }
            try app.notify(2, [9])
            try await settle(.milliseconds(200))
            #expect(received().count == 53)
            await peer.close()
        }
    }

    @Test func withSeveralBearersABurstArrivesWhole() async throws {
        try await H.run({
            $0.disconnectDelay = .milliseconds(20)
            $0.latency = .milliseconds(1) ... .milliseconds(15)
        }) { h in
            let (peer, app, device) = try await Self.connectedApplication(h)
            let response = try Self.remote(device, "service0015/char001a")
            let values = try await SignalLog(
                h.client, DBusMatchRule(sender: H.bluez, interface: H.properties, member: "PropertiesChanged", path: response))
            try await h.call(response, Self.characteristicInterface, "StartNotify")
            for index in 0..<60 { try app.notify(2, [UInt8(index)]) }
            func order() -> [UInt8] { values.all.compactMap { $0.body.count == 3 ? $0.body[1].vardict?["Value"]?.bytes?.first : nil } }
            try await eventually("the burst") { order().count == 60 }
            try await settle(.milliseconds(100))
            // Every notification exactly once; the order is the bearers' (EATT), as on the rig.
            let order = order()
            #expect(order.count == 60)
            #expect(order.sorted() == (0..<60).map(UInt8.init))
            await peer.close()
        }
    }

    @Test func aClientLeavingEndsItsNotificationSession() async throws {
        try await H.run(Self.fast) { h in
            let (peer, app, device) = try await Self.connectedApplication(h)
            let response = try Self.remote(device, "service0015/char001a")
            let listener = try await h.connect()
            try await h.call(response, Self.characteristicInterface, "StartNotify", from: listener)
            try await eventually("StartNotify") { app.calls("StartNotify").count == 1 }
            await listener.close()
            try await eventually("StopNotify") { app.calls("StopNotify").count == 1 }
            #expect(try await h.get(response, Self.characteristicInterface, "Notifying") == .boolean(false))
            await peer.close()
        }
    }
}
