import BlueZSimulator
import DBus
import DBusTestSupport
import Testing

/// AdvertisementMonitorManager1 and AdvertisementMonitor1, as
/// org.bluez.AdvertisementMonitorManager(5) and org.bluez.AdvertisementMonitor(5) describe them.
@Suite struct MonitorTests {
    typealias H = SimulatorHarness
    static let manager = "org.bluez.AdvertisementMonitorManager1"

    static func experimental(_ configuration: inout SimulatorConfiguration) {
        configuration.experimental = true
    }

    /// Registers `monitor`'s application on `adapter`, from the monitor's connection.
    static func register(_ h: H, _ monitor: TestMonitor, on adapter: DBusObjectPath = H.hci1) async throws {
        try await h.call(adapter, manager, "RegisterMonitor", [.objectPath(monitor.root)], from: monitor.connection)
    }

    /// An advertisement of `data` under company 0xFFFF, registered on hci0 from its own connection:
    /// a broadcast, or discoverable and connectable with `discoverable`.
    static func advertise(
        _ h: H, _ path: DBusObjectPath, _ data: [UInt8], discoverable: Bool? = nil
    ) async throws -> TestAdvertisement {
        let peer = try await h.connect()
        let advertisement = try await TestAdvertisement(
            on: peer, path: path,
            properties: TestAdvertisement.properties(
                type: discoverable == true ? "peripheral" : "broadcast", data: data, discoverable: discoverable))
        try await h.register(advertisement)
        return advertisement
    }

    @Test func theManagerIsOfferedOnlyWhenExperimental() async throws {
        try await H.run { h in
            let objects = try await h.managedObjects()
            #expect(objects[H.hci0]?[Self.manager] == nil)
            await #expect(throws: DBusError.self) {
                try await h.call(H.hci0, Self.manager, "RegisterMonitor", [.objectPath("/m")])
            }
        }
        try await H.run(Self.experimental) { h in
            let manager = try #require(try await h.managedObjects()[H.hci0]?[Self.manager])
            #expect(manager["SupportedMonitorTypes"] == .strings(["or_patterns"]))
            #expect(manager["SupportedFeatures"] == .strings([]))
        }
    }

    @Test func anActiveMonitorDeliversMatchingAdvertisementsWithoutDiscovery() async throws {
        // Updates keep their address: the device objects stay the same.
        try await H.run({ $0.experimental = true; $0.rotateOnUpdate = false }) { h in
            // Discoverable: bluetoothd would make a device of it for any discovery, filtered or not.
            let stranger = try await Self.advertise(h, "/test/stranger", [0x20, 1, 2], discoverable: true)
            let ours = try await Self.advertise(h, "/test/ours", [0x1A, 1, 2])
            let monitor = try await TestMonitor(on: try await h.connect(), root: "/app", properties: TestMonitor.handoff)
            try await Self.register(h, monitor)
            try await eventually("Activate, then DeviceFound") {
                monitor.calls.count == 2 && monitor.calls[0] == "Activate" && monitor.calls[1].hasPrefix("DeviceFound ")
            }
            let devices = try await h.devices(on: H.hci1)
            #expect(devices.count == 1)
            let (path, device) = try #require(devices.first)
            #expect(AirTests.manufacturerData(device) == [0xFFFF: [0x1A, 1, 2]])
            #expect(monitor.calls[1] == "DeviceFound \(path)")
            #expect(try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(false))
            // A new payload of ours is heard; the stranger's is not, however often it changes.
            try await stranger.setManufacturerData(0xFFFF, [0x21, 9])
            try await ours.setManufacturerData(0xFFFF, [0x1B, 9])
            try await eventually("our new data") {
                try await AirTests.manufacturerData(h.devices(on: H.hci1)[path] ?? [:]) == [0xFFFF: [0x1B, 9]]
            }
            try await settle()
            #expect(try await h.devices(on: H.hci1).count == 1)
            #expect(monitor.calls.count == 2, "one DeviceFound per device")
            // Discovery still hears everybody.
            try await h.scan(H.hci1)
            try await eventually("the stranger while discovering") { try await h.devices(on: H.hci1).count == 2 }
        }
    }

    /// bluetoothd sizes its Add Adv Patterns Monitor command in a uint8_t, so a monitor of 8 or more
    /// patterns overruns its heap and it aborts (seen on the VM rig with 16): the simulated one leaves the
    /// bus likewise, and 7 patterns are taken.
    @Test func aMonitorOfEightPatternsStopsBluetoothdAsTheRealOneAborts() async throws {
        try await H.run(Self.experimental) { h in
            let seven = try await TestMonitor(on: try await h.connect(), root: "/seven", properties: TestMonitor.handoff)
            try await Self.register(h, seven)
            try await eventually("Activate of 7 patterns") { seven.calls == ["Activate"] }
            let eight = TestMonitor.orPatterns((0..<8).map { (0, 0xFF, [0xFF, 0xFF, 0x10 | UInt8($0)]) })
            let monitor = try await TestMonitor(on: try await h.connect(), root: "/eight", properties: eight)
            await #expect(throws: (any Error).self) { try await Self.register(h, monitor) }
            try await eventually("org.bluez left the bus") { (try? await h.managedObjects()) == nil }
        }
    }

    @Test func anInvalidMonitorIsReleasedAndHearsNothing() async throws {
        try await H.run(Self.experimental) { h in
            _ = try await Self.advertise(h, "/test/ours", [0x1A])
            var properties = TestMonitor.orPatterns([(30, 0xFF, [0xFF, 0xFF])])  // ends past 31 bytes
            let monitor = try await TestMonitor(on: try await h.connect(), root: "/app", properties: properties)
            try await Self.register(h, monitor)
            try await eventually("Release") { monitor.calls == ["Release"] }
            properties["Patterns"] = .array(element: .structure([.byte, .byte, .array(.byte)]), [])
            let empty = try await TestMonitor(on: try await h.connect(), root: "/empty", properties: properties)
            try await Self.register(h, empty)
            try await eventually("Release of the empty one") { empty.calls == ["Release"] }
            try await settle()
            #expect(try await h.devices(on: H.hci1).isEmpty)
        }
    }

    @Test func registrationErrorsAndUnregisterReleases() async throws {
        try await H.run(Self.experimental) { h in
            let monitor = try await TestMonitor(on: try await h.connect(), root: "/app", properties: TestMonitor.handoff)
            try await Self.register(h, monitor)
            try await eventually("Activate") { monitor.calls == ["Activate"] }
            do {
                try await Self.register(h, monitor)
                Issue.record("a second RegisterMonitor succeeded")
            } catch let error as DBusError {
                #expect(error.name == "org.bluez.Error.AlreadyExists")
            }
            try await h.call(H.hci1, Self.manager, "UnregisterMonitor", [.objectPath("/app")], from: monitor.connection)
            try await eventually("Release") { monitor.calls == ["Activate", "Release"] }
            do {
                try await h.call(H.hci1, Self.manager, "UnregisterMonitor", [.objectPath("/app")], from: monitor.connection)
                Issue.record("a second UnregisterMonitor succeeded")
            } catch let error as DBusError {
                #expect(error.name == "org.bluez.Error.DoesNotExist")
            }
            // Unregistered: nothing is heard any more.
            _ = try await Self.advertise(h, "/test/ours", [0x1A])
            try await settle()
            #expect(try await h.devices(on: H.hci1).isEmpty)
        }
    }

    @Test func deviceLostWhenTheDeviceTimesOut() async throws {
        try await H.run({ $0.experimental = true; $0.temporaryTimeout = .milliseconds(500) }) { h in
            let ours = try await Self.advertise(h, "/test/ours", [0x1A])
            let monitor = try await TestMonitor(on: try await h.connect(), root: "/app", properties: TestMonitor.handoff)
            try await Self.register(h, monitor)
            try await eventually("DeviceFound") { monitor.calls.count == 2 }
            try await h.unregister(ours)
            try await eventually("DeviceLost") { monitor.calls.count == 3 }
            let found = monitor.calls[1].dropFirst("DeviceFound ".count)
            #expect(monitor.calls[2] == "DeviceLost \(found)")
            #expect(try await h.devices(on: H.hci1).isEmpty)
        }
    }
}
