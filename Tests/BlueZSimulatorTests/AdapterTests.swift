import BlueZSimulator
import DBus
import DBusTestSupport
import Testing

@Suite struct AdapterTests {
    typealias H = SimulatorHarness

    @Test func exportsAdaptersWithBlueZNamesAndTypes() async throws {
        try await H.run { h in
            let objects = try await h.managedObjects()
            #expect(objects.keys.filter { $0.rawValue.hasPrefix("/org/bluez/hci") }.sorted() == [H.hci0, H.hci1])
            let adapter = try #require(objects[H.hci0]?[H.adapterInterface])
            let expected: [String: String] = [
                "Address": "s", "AddressType": "s", "Name": "s", "Alias": "s", "Class": "u", "Powered": "b",
                "Discoverable": "b", "DiscoverableTimeout": "u", "Pairable": "b", "PairableTimeout": "u",
                "Discovering": "b", "UUIDs": "as", "Modalias": "s", "Roles": "as",
            ]
            #expect(adapter.mapValues(\.type.signature) == expected)
            #expect(adapter["Address"] == .string("00:AA:01:00:00:10"))
            #expect(adapter["Powered"] == .boolean(true))
            #expect(adapter["Discovering"] == .boolean(false))
            #expect(objects[H.hci1]?[H.adapterInterface]?["Address"] == .string("00:AA:01:00:00:11"))
            #expect(objects[H.hci1]?[H.adapterInterface]?["Alias"] == .string("handoff-sim #2"))

            let manager = try #require(objects[H.hci0]?[H.advertisingInterface])
            #expect(manager["ActiveInstances"] == .byte(0))
            #expect(manager["SupportedInstances"] == .byte(5))
            #expect(manager["SupportedIncludes"]?.type.signature == "as")
            // Legacy advertising only (the default, as btvirt -L): bluetoothd leaves the property out.
            #expect(manager["SupportedSecondaryChannels"] == nil)
            #expect(manager["SupportedFeatures"]?.type.signature == "as")
            let capabilities = try #require(manager["SupportedCapabilities"]?.vardict)
            #expect(capabilities["MaxAdvLen"] == .byte(31))
        }
    }

    @Test func discoverySessionsArePerClient() async throws {
        try await H.run { h in
            let other = try await h.connect()
            try await h.call(H.hci1, H.adapterInterface, "StartDiscovery")
            #expect(try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(true))
            let second = await #expect(throws: DBusError.self) {
                try await h.call(H.hci1, H.adapterInterface, "StartDiscovery")
            }
            #expect(second?.name == "org.bluez.Error.InProgress")
            try await h.call(H.hci1, H.adapterInterface, "StartDiscovery", from: other)
            try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")
            #expect(try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(true))
            try await h.call(H.hci1, H.adapterInterface, "StopDiscovery", from: other)
            #expect(try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(false))
            let stopped = await #expect(throws: DBusError.self) {
                try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")
            }
            #expect(stopped?.name == "org.bluez.Error.Failed")
            #expect(stopped?.message == "No discovery started")
            await other.close()
        }
    }

    @Test func setDiscoveryFilterChecksKeysAndTypes() async throws {
        try await H.run { h in
            let bad: [[String: DBusValue]] = [
                ["Bogus": true],
                ["Transport": .uint32(1)],
                ["Transport": "radio"],
                ["RSSI": .int16(-200)],
                ["RSSI": .int32(-50)],
                ["RSSI": .int16(-60), "Pathloss": .uint16(10)],
                ["UUIDs": .strings(["not-a-uuid"])],
                ["DuplicateData": "yes"],
            ]
            for filter in bad {
                let error = await #expect(throws: DBusError.self, "\(filter)") {
                    try await h.call(H.hci0, H.adapterInterface, "SetDiscoveryFilter", [.vardict(filter)])
                }
                #expect(error?.name == "org.bluez.Error.InvalidArguments")
            }
            let good: [String: DBusValue] = [
                "Transport": "le", "DuplicateData": true, "RSSI": .int16(-90),
                "UUIDs": .strings(["180d", "0000fe2c-0000-1000-8000-00805f9b34fb"]), "Pattern": "",
            ]
            try await h.call(H.hci0, H.adapterInterface, "SetDiscoveryFilter", [.vardict(good)])
            try await h.call(H.hci0, H.adapterInterface, "SetDiscoveryFilter", [.vardict([:])])
            let keys = try await h.call(H.hci0, H.adapterInterface, "GetDiscoveryFilters").decode([String].self)
            #expect(keys == ["UUIDs", "RSSI", "Pathloss", "Transport", "DuplicateData", "Discoverable", "Pattern"])
        }
    }

    @Test func poweringOffStopsDiscoveryAndDropsSessions() async throws {
        try await H.run { h in
            try await h.scan(H.hci1)
            try await h.set(H.hci1, H.adapterInterface, "Powered", false)
            try await eventually("Discovering false") {
                try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(false)
            }
            let error = await #expect(throws: DBusError.self) {
                try await h.call(H.hci1, H.adapterInterface, "StartDiscovery")
            }
            #expect(error?.name == "org.bluez.Error.NotReady")
            let discoverable = await #expect(throws: DBusError.self) {
                try await h.set(H.hci1, H.adapterInterface, "Discoverable", true)
            }
            #expect(discoverable?.name == "org.bluez.Error.Failed")
            try await h.set(H.hci1, H.adapterInterface, "Powered", true)
            try await h.call(H.hci1, H.adapterInterface, "StartDiscovery")
            // The session from before the power cycle is gone: this one is new, so no InProgress.
            try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")
        }
    }

    @Test func poweredOffAdapterStopsAdvertisingUntilPoweredOn() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement)
            try await h.set(H.hci0, H.adapterInterface, "Powered", false)
            try await h.scan(H.hci1)
            try await settle()
            #expect(try await h.devices(on: H.hci1).isEmpty)
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(1))
            try await h.set(H.hci0, H.adapterInterface, "Powered", true)
            try await eventually("the advertisement back on the air") {
                try await !h.devices(on: H.hci1).isEmpty
            }
            #expect(advertisement.released == 0)
            await peer.close()
        }
    }

    @Test func aClientLeavingTheBusLosesItsSessionsAndAdvertisements() async throws {
        try await H.run { h in
            let leaver = try await h.connect()
            try await h.scan(H.hci0, from: leaver)
            let advertisement = try await TestAdvertisement(
                on: leaver, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement, on: H.hci1)
            #expect(try await h.get(H.hci1, H.advertisingInterface, "ActiveInstances") == .byte(1))
            #expect(try await h.get(H.hci0, H.adapterInterface, "Discovering") == .boolean(true))
            await leaver.close()
            try await eventually("the session and advertisement to go") {
                let discovering = try await h.get(H.hci0, H.adapterInterface, "Discovering")
                let active = try await h.get(H.hci1, H.advertisingInterface, "ActiveInstances")
                return discovering == .boolean(false) && active == .byte(0)
            }
            #expect(try await h.get(H.hci1, H.advertisingInterface, "SupportedInstances") == .byte(5))
        }
    }

    @Test func removeDeviceNeedsAKnownPath() async throws {
        try await H.run { h in
            let error = await #expect(throws: DBusError.self) {
                try await h.call(
                    H.hci1, H.adapterInterface, "RemoveDevice", [.objectPath("/org/bluez/hci1/dev_00_11_22_33_44_55")])
            }
            #expect(error?.name == "org.bluez.Error.DoesNotExist")
        }
    }
}
