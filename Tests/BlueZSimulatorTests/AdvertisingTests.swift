import BlueZSimulator
import DBus
import DBusTestSupport
import Testing

@Suite struct AdvertisingTests {
    typealias H = SimulatorHarness

    @Test func registrationReadsTheObjectFromTheCaller() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            // Nothing exported at the path: the read-back fails, so does the registration.
            let error = await #expect(throws: DBusError.self) {
                try await h.call(
                    H.hci0, H.advertisingInterface, "RegisterAdvertisement", [.objectPath("/test/none"), .vardict([:])],
                    from: peer)
            }
            #expect(error?.name == "org.bluez.Error.Failed")
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(0))
            // Exported: the properties it reads decide the outcome.
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement)
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(1))
            #expect(try await h.get(H.hci0, H.advertisingInterface, "SupportedInstances") == .byte(4))
            await peer.close()
        }
    }

    @Test func dataOverTheLegacyBudgetIsInvalidLength() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            // 2 + 2 + 27 = 31 bytes fit; 28 bytes of data do not.
            let fits = try await TestAdvertisement(
                on: peer, path: "/test/fits", properties: TestAdvertisement.properties(data: Array(repeating: 7, count: 27)))
            try await h.register(fits)
            let tooLong = try await TestAdvertisement(
                on: peer, path: "/test/long", properties: TestAdvertisement.properties(data: Array(repeating: 7, count: 28)))
            let error = await #expect(throws: DBusError.self) { try await h.register(tooLong) }
            #expect(error?.name == "org.bluez.Error.InvalidLength")
            // Discoverable adds a 3-byte Flags field: 24 bytes of data fit, 25 do not.
            let flagged = try await TestAdvertisement(
                on: peer, path: "/test/flagged",
                properties: TestAdvertisement.properties(data: Array(repeating: 7, count: 25), discoverable: true))
            let flaggedError = await #expect(throws: DBusError.self) { try await h.register(flagged) }
            #expect(flaggedError?.name == "org.bluez.Error.InvalidLength")
            let flaggedFits = try await TestAdvertisement(
                on: peer, path: "/test/flagged_fits",
                properties: TestAdvertisement.properties(data: Array(repeating: 7, count: 24), discoverable: true))
            try await h.register(flaggedFits)
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(2))
            await peer.close()
        }
    }

    @Test func lengthErrorNameIsConfigurable() async throws {
        try await H.run({ $0.lengthErrorName = "org.bluez.Error.Failed" }) { h in
            let peer = try await h.connect()
            let tooLong = try await TestAdvertisement(
                on: peer, path: "/test/long", properties: TestAdvertisement.properties(data: Array(repeating: 7, count: 30)))
            let error = await #expect(throws: DBusError.self) { try await h.register(tooLong) }
            #expect(error?.name == "org.bluez.Error.Failed")
            #expect(error?.message == "Failed to register advertisement")
            await peer.close()
        }
    }

    @Test func theSixthAdvertisementIsNotPermitted() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            for index in 0..<5 {
                let advertisement = try await TestAdvertisement(
                    on: peer, path: try DBusObjectPath("/test/adv\(index)"),
                    properties: TestAdvertisement.properties(data: [UInt8(index)]))
                try await h.register(advertisement)
            }
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(5))
            #expect(try await h.get(H.hci0, H.advertisingInterface, "SupportedInstances") == .byte(0))
            let sixth = try await TestAdvertisement(
                on: peer, path: "/test/adv5", properties: TestAdvertisement.properties(data: [5]))
            let error = await #expect(throws: DBusError.self) { try await h.register(sixth) }
            #expect(error?.name == "org.bluez.Error.NotPermitted")
            #expect(error?.message == "Maximum advertisements reached")
            // The other adapter has its own instances.
            try await h.register(sixth, on: H.hci1)
            await peer.close()
        }
    }

    /// As seen on the VM rig (bluetoothd 5.66, kernel 6.1, btvirt): the kernel's
    /// LE Set Random Address for the new advertisement gets Command Disallowed.
    @Test func aBroadcastAdvertisementCannotStartWhileItsAdapterScans() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            let broadcast = try await TestAdvertisement(
                on: peer, path: "/test/broadcast", properties: TestAdvertisement.properties(type: "broadcast"))
            try await h.scan(H.hci0)
            let error = await #expect(throws: DBusError.self) { try await h.register(broadcast) }
            #expect(error?.name == "org.bluez.Error.Failed")
            #expect(error?.message == "Failed to register advertisement")
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(0))
            // Scanning on another adapter does not matter.
            try await h.register(broadcast, on: H.hci1)
            // A connectable advertisement keeps the public address: no conflict.
            let peripheral = try await TestAdvertisement(
                on: peer, path: "/test/peripheral", properties: TestAdvertisement.properties())
            try await h.register(peripheral)
            // With the scan stopped, the broadcast one starts.
            try await h.call(H.hci0, H.adapterInterface, "StopDiscovery")
            try await h.register(broadcast)
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(2))
            await peer.close()
        }
    }

    @Test func extendedAdvertisingControllersStartBroadcastsWhileScanning() async throws {
        try await H.run({ $0.legacyAdvertising = false }) { h in
            let peer = try await h.connect()
            let broadcast = try await TestAdvertisement(
                on: peer, path: "/test/broadcast", properties: TestAdvertisement.properties(type: "broadcast"))
            try await h.scan(H.hci0)
            try await h.register(broadcast)
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(1))
            await peer.close()
        }
    }

    @Test func registeringTwiceIsAlreadyExists() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement)
            let error = await #expect(throws: DBusError.self) { try await h.register(advertisement) }
            #expect(error?.name == "org.bluez.Error.AlreadyExists")
            await peer.close()
        }
    }

    @Test func unregisterDoesNotCallRelease() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement)
            try await h.unregister(advertisement)
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(0))
            let again = await #expect(throws: DBusError.self) { try await h.unregister(advertisement) }
            #expect(again?.name == "org.bluez.Error.DoesNotExist")
            try await settle()
            #expect(advertisement.released == 0)
            await peer.close()
        }
    }

    @Test func timeoutExpiryCallsRelease() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            var properties = TestAdvertisement.properties()
            properties["Timeout"] = .uint16(1)
            let advertisement = try await TestAdvertisement(on: peer, path: "/test/adv", properties: properties)
            try await h.register(advertisement)
            try await eventually("Release after the Timeout") { advertisement.released == 1 }
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(0))
            await peer.close()
        }
    }

    @Test func invalidAdvertisementsFailToParse() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            let cases: [(String, [String: DBusValue])] = [
                ("no Type", ["ManufacturerData": TestAdvertisement.manufacturerData(0xFFFF, [1])]),
                ("unknown Type", ["Type": "beacon"]),
                ("Type not a string", ["Type": .uint32(1)]),
                ("broadcast and Discoverable", ["Type": "broadcast", "Discoverable": true]),
                ("MinInterval > MaxInterval", ["Type": "peripheral", "MinInterval": .uint32(200), "MaxInterval": .uint32(100)]),
                ("interval below 20 ms", ["Type": "peripheral", "MinInterval": .uint32(10), "MaxInterval": .uint32(100)]),
                ("LocalName with local-name included", ["Type": "peripheral", "LocalName": "x", "Includes": .strings(["local-name"])]),
                ("a Data type handled elsewhere", ["Type": "peripheral", "Data": .dictionary(key: .byte, value: .variant, [(.byte(0xFF), .variant(.bytes([1])))])]),
                ("DiscoverableTimeout > Timeout", ["Type": "peripheral", "Discoverable": true, "DiscoverableTimeout": .uint16(10), "Timeout": .uint16(5)]),
            ]
            for (index, (what, properties)) in cases.enumerated() {
                let advertisement = try await TestAdvertisement(
                    on: peer, path: try DBusObjectPath("/test/bad\(index)"), properties: properties)
                let error = await #expect(throws: DBusError.self, "\(what)") { try await h.register(advertisement) }
                #expect(error?.name == "org.bluez.Error.Failed", "\(what)")
                #expect(error?.message == "Failed to parse advertisement.", "\(what)")
            }
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(0))
            await peer.close()
        }
    }
}
