import BlueZSimulator
import DBus
import DBusTestSupport
import Testing

@Suite struct AirTests {
    typealias H = SimulatorHarness

    /// PropertiesChanged from org.bluez under `adapter`.
    static func propertyChanges(_ h: H, under adapter: DBusObjectPath) async throws -> SignalLog {
        try await SignalLog(
            h.client,
            DBusMatchRule(
                sender: H.bluez, interface: H.properties, member: "PropertiesChanged", pathNamespace: adapter))
    }

    static func objectManagerSignals(_ h: H, _ member: String) async throws -> SignalLog {
        try await SignalLog(h.client, DBusMatchRule(sender: H.bluez, interface: H.objectManager, member: member, path: "/"))
    }

    static func manufacturerData(_ properties: [String: DBusValue]) -> [UInt16: [UInt8]] {
        var result: [UInt16: [UInt8]] = [:]
        for (key, value) in properties["ManufacturerData"]?.dictionaryEntries ?? [] {
            if case .uint16(let company) = key, let bytes = value.bytes { result[company] = bytes }
        }
        return result
    }

    @Test func anAdvertisementOnHci0AppearsAsADeviceOnHci1() async throws {
        try await H.run { h in
            let added = try await Self.objectManagerSignals(h, "InterfacesAdded")
            try await h.scan(H.hci1)
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties(data: [1, 2, 3]))
            try await h.register(advertisement)
            var devices: [DBusObjectPath: [String: DBusValue]] = [:]
            try await eventually("a Device1 on hci1") {
                devices = try await h.devices(on: H.hci1)
                return !devices.isEmpty
            }
            let (path, device) = try #require(devices.first)
            #expect(Self.manufacturerData(device) == [0xFFFF: [1, 2, 3]])
            #expect(device["AddressType"] == .string("random"))
            #expect(device["Adapter"] == .objectPath(H.hci1))
            for flag in ["Paired", "Bonded", "Trusted", "Blocked", "Connected", "LegacyPairing", "ServicesResolved"] {
                #expect(device[flag] == .boolean(false), "\(flag)")
            }
            #expect(device["ManufacturerData"]?.type.signature == "a{qv}")
            #expect(device["AdvertisingFlags"] == .bytes([0x04]))
            #expect(device["UUIDs"]?.type.signature == "as")
            guard case .int16(let rssi)? = device["RSSI"] else {
                Issue.record("RSSI is not an int16: \(String(describing: device["RSSI"]))")
                return
            }
            #expect((-70 ... -40).contains(rssi))
            let address = try #require(device["Address"]?.string)
            #expect(path.rawValue == "/org/bluez/hci1/dev_" + address.replacingOccurrences(of: ":", with: "_"))
            #expect(device["Alias"] == .string(address.replacingOccurrences(of: ":", with: "-")))
            // InterfacesAdded carried the data; hci0 (the advertiser, not scanning) has no device.
            #expect(added.count { $0.body.first == .objectPath(path) } == 1)
            #expect(try await h.devices(on: H.hci0).isEmpty)
            await peer.close()
        }
    }

    @Test func withoutAFilterOnlyDiscoverableAdvertisementsAreSeen() async throws {
        try await H.run { h in
            try await h.scan(H.hci1, filter: nil)
            let peer = try await h.connect()
            let hidden = try await TestAdvertisement(
                on: peer, path: "/test/hidden", properties: TestAdvertisement.properties(data: [1]))
            try await h.register(hidden)
            try await settle()
            #expect(try await h.devices(on: H.hci1).isEmpty)
            let flagged = try await TestAdvertisement(
                on: peer, path: "/test/flagged", properties: TestAdvertisement.properties(data: [2], discoverable: true))
            try await h.register(flagged)
            var devices: [DBusObjectPath: [String: DBusValue]] = [:]
            try await eventually("the discoverable advertisement") {
                devices = try await h.devices(on: H.hci1)
                return !devices.isEmpty
            }
            #expect(devices.count == 1)
            #expect(devices.values.first.map(Self.manufacturerData) == [0xFFFF: [2]])
            #expect(devices.values.first?["AdvertisingFlags"] == .bytes([0x06]))
            await peer.close()
        }
    }

    @Test func duplicateDataRepeatsManufacturerDataAtEveryReport() async throws {
        try await H.run({ $0.rescanInterval = .milliseconds(100) }) { h in
            let changes = try await Self.propertyChanges(h, under: H.hci1)
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement)
            func manufacturerDataSignals() -> Int {
                changes.count { message in
                    message.body.first == .string(H.deviceInterface)
                        && message.body.count == 3 && message.body[1].vardict?["ManufacturerData"] != nil
                }
            }
            try await h.scan(H.hci1, filter: ["Transport": "le", "DuplicateData": true])
            try await eventually("repeated ManufacturerData") { manufacturerDataSignals() >= 3 }
            try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")

            // DuplicateData false: unchanged data gives no more signals.
            try await h.scan(H.hci1, filter: ["Transport": "le", "DuplicateData": false])
            try await eventually("the device back") { try await !h.devices(on: H.hci1).isEmpty }
            let before = manufacturerDataSignals()
            try await settle(.milliseconds(600))
            #expect(manufacturerDataSignals() == before)
            await peer.close()
        }
    }

    @Test func theManufacturerDataCacheFollowsDuplicateData() async throws {
        for duplicate in [false, true] {
            try await H.run({ $0.rotateOnUpdate = false }) { h in
                try await h.scan(H.hci1, filter: ["Transport": "le", "DuplicateData": .boolean(duplicate)])
                let peer = try await h.connect()
                let advertisement = try await TestAdvertisement(
                    on: peer, path: "/test/adv", properties: TestAdvertisement.properties(company: 0xFFFF, data: [1]))
                try await h.register(advertisement)
                try await eventually("the device") { try await !h.devices(on: H.hci1).isEmpty }
                try await advertisement.object.setProperty(
                    "ManufacturerData", of: TestAdvertisement.interface,
                    to: TestAdvertisement.manufacturerData(0x0059, [9]))
                var data: [UInt16: [UInt8]] = [:]
                try await eventually("company 0x0059") {
                    data = try await h.devices(on: H.hci1).values.first.map(Self.manufacturerData) ?? [:]
                    return data[0x0059] == [9]
                }
                // With DuplicateData the cache holds only the latest report; without, stale companies stay.
                #expect(data == (duplicate ? [0x0059: [9]] : [0xFFFF: [1], 0x0059: [9]]), "DuplicateData \(duplicate)")
                await peer.close()
            }
        }
    }

    @Test func aLiveUpdateIsHeardAndRotatesTheAddress() async throws {
        try await H.run { h in
            try await h.scan(H.hci1)
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties(data: [1, 1]))
            try await h.register(advertisement)
            var first: DBusObjectPath?
            try await eventually("the first device") {
                first = try await h.devices(on: H.hci1).keys.first
                return first != nil
            }
            try await advertisement.setManufacturerData(0xFFFF, [2, 2])
            var devices: [DBusObjectPath: [String: DBusValue]] = [:]
            try await eventually("the updated data under a new address") {
                devices = try await h.devices(on: H.hci1)
                return devices.contains { $0.key != first && Self.manufacturerData($0.value) == [0xFFFF: [2, 2]] }
            }
            // The old address stays until TemporaryTimeout, with its old data.
            #expect(devices[try #require(first)].map(Self.manufacturerData) == [0xFFFF: [1, 1]])
            await peer.close()
        }
    }

    /// As seen on the VM rig: bluetoothd accepts the update, the kernel restarts
    /// the advertisement, and the controller refuses its new address while scanning.
    @Test func aLiveUpdateWhileTheAdvertiserScansIsOffTheAirUntilTheScanStops() async throws {
        try await H.run { h in
            try await h.scan(H.hci1)
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties(type: "broadcast", data: [1]))
            try await h.register(advertisement)
            func heard(_ data: [UInt8]) async throws -> Bool {
                try await h.devices(on: H.hci1).values.contains { Self.manufacturerData($0) == [0xFFFF: data] }
            }
            try await eventually("the first data") { try await heard([1]) }
            try await h.scan(H.hci0)
            try await advertisement.setManufacturerData(0xFFFF, [2])
            try await settle()
            #expect(try await heard([2]) == false)
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(1))
            try await h.call(H.hci0, H.adapterInterface, "StopDiscovery")
            try await eventually("the new data once the scan stopped") { try await heard([2]) }
            await peer.close()
        }
    }

    @Test func withoutRotationAnUpdateKeepsTheDevice() async throws {
        try await H.run({ $0.rotateOnUpdate = false }) { h in
            try await h.scan(H.hci1)
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties(data: [1]))
            try await h.register(advertisement)
            try await eventually("the device") { try await !h.devices(on: H.hci1).isEmpty }
            try await advertisement.setManufacturerData(0xFFFF, [2])
            try await eventually("the new data on the same device") {
                let devices = try await h.devices(on: H.hci1)
                return devices.count == 1 && devices.values.first.map(Self.manufacturerData) == [0xFFFF: [2]]
            }
            await peer.close()
        }
    }

    @Test func devicesNotSeenForTheTemporaryTimeoutAreRemoved() async throws {
        try await H.run({ $0.temporaryTimeout = .milliseconds(500) }) { h in
            let removed = try await Self.objectManagerSignals(h, "InterfacesRemoved")
            try await h.scan(H.hci1)
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement)
            var path: DBusObjectPath?
            try await eventually("the device") {
                path = try await h.devices(on: H.hci1).keys.first
                return path != nil
            }
            try await h.unregister(advertisement)
            try await eventually("InterfacesRemoved") {
                removed.count { $0.body.first == .objectPath(path!) } == 1
            }
            #expect(try await h.devices(on: H.hci1).isEmpty)
            // Still discovering: only the device went.
            #expect(try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(true))
            await peer.close()
        }
    }

    @Test func theLastStopDiscoveryRemovesNonConnectableDevices() async throws {
        try await H.run { h in
            try await h.scan(H.hci1)
            let peer = try await h.connect()
            let broadcast = try await TestAdvertisement(
                on: peer, path: "/test/broadcast", properties: TestAdvertisement.properties(type: "broadcast", data: [1]))
            let peripheral = try await TestAdvertisement(
                on: peer, path: "/test/peripheral", properties: TestAdvertisement.properties(data: [2]))
            try await h.register(broadcast)
            try await h.register(peripheral)
            try await eventually("both devices") { try await h.devices(on: H.hci1).count == 2 }
            try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")
            // bluetoothd's discovery_cleanup: temporary devices that are not connectable go at once.
            let devices = try await h.devices(on: H.hci1)
            #expect(devices.count == 1)
            #expect(devices.values.first.map(Self.manufacturerData) == [0xFFFF: [2]])
            await peer.close()
        }
    }

    @Test func aFilterOnUUIDsAndRSSIIsAppliedLikeTheKernelFilter() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            var withService = TestAdvertisement.properties(data: [1])
            withService["ServiceUUIDs"] = .strings(["180d"])
            try await h.register(try await TestAdvertisement(on: peer, path: "/test/service", properties: withService))
            try await h.register(
                try await TestAdvertisement(on: peer, path: "/test/plain", properties: TestAdvertisement.properties(data: [2])))
            try await h.scan(H.hci1, filter: ["Transport": "le", "UUIDs": .strings(["0000180d-0000-1000-8000-00805f9b34fb"])])
            try await eventually("the device with the service") { try await h.devices(on: H.hci1).count == 1 }
            try await settle()
            let devices = try await h.devices(on: H.hci1)
            #expect(devices.count == 1)
            #expect(devices.values.first?["UUIDs"] == .strings(["0000180d-0000-1000-8000-00805f9b34fb"]))
            try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")
            for path in try await h.devices(on: H.hci1).keys {
                try await h.call(H.hci1, H.adapterInterface, "RemoveDevice", [.objectPath(path)])
            }
            // An RSSI threshold above what the air delivers hides everything.
            try await h.scan(H.hci1, filter: ["Transport": "le", "RSSI": .int16(-20)])
            try await settle()
            #expect(try await h.devices(on: H.hci1).isEmpty)
            await peer.close()
        }
    }
}
