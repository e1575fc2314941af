import BlueZSimulator
import DBus
import DBusTestSupport
import Testing

@Suite struct ControlTests {
    typealias H = SimulatorHarness

    @Test func restartDropsOffTheBusAndComesBackFresh() async throws {
        try await H.run { h in
            let owners = try await h.client.nameOwnerChanges(of: H.bluez)
            var changes = owners.makeAsyncIterator()
            let first = try #require(try await changes.next() ?? nil)
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement)
            try await h.scan(H.hci1)
            try await eventually("a device") { try await !h.devices(on: H.hci1).isEmpty }

            try await h.control("Restart", [.uint32(300), .boolean(false)])
            #expect(try await changes.next() == .some(nil))
            let second = try #require(try await changes.next() ?? nil)
            #expect(second != first)
            try await eventually("both adapters powered") {
                let zero = try? await h.get(H.hci0, H.adapterInterface, "Powered")
                let one = try? await h.get(H.hci1, H.adapterInterface, "Powered")
                return zero == .boolean(true) && one == .boolean(true)
            }
            #expect(try await h.get(H.hci0, H.advertisingInterface, "ActiveInstances") == .byte(0))
            #expect(try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(false))
            #expect(try await h.devices(on: H.hci1).isEmpty)
            // A crash, not a graceful stop: nobody called Release.
            #expect(advertisement.released == 0)
            // Sessions are gone too: StopDiscovery has nothing to stop, StartDiscovery works again.
            let stop = await #expect(throws: DBusError.self) {
                try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")
            }
            #expect(stop?.name == "org.bluez.Error.Failed")
            try await h.register(advertisement)
            #expect(try await h.stats()["Restarts"] == .uint32(1))
            await peer.close()
        }
    }

    /// As on the VM rig after `kill -9 bluetoothd`: the kernel goes on with the
    /// dead daemon's scan, the new one's StartDiscovery is answered and then
    /// dropped without a word, and a broadcast advertisement cannot start;
    /// a power cycle, or the end of the kernel's round, clears it.
    @Test func aKilledBluetoothdLeavesItsScanRunning() async throws {
        try await H.run({ $0.killedScanLinger = .seconds(2) }) { h in
            try await h.scan(H.hci0)
            try await h.scan(H.hci1)
            try await h.control("Restart", [.uint32(100), .boolean(false)])
            try await eventually("org.bluez back with both adapters powered") {
                let zero = try? await h.get(H.hci0, H.adapterInterface, "Powered")
                let one = try? await h.get(H.hci1, H.adapterInterface, "Powered")
                return zero == .boolean(true) && one == .boolean(true)
            }
            let peer = try await h.connect()
            let broadcast = try await TestAdvertisement(
                on: peer, path: "/test/broadcast", properties: TestAdvertisement.properties(type: "broadcast"))
            for adapter in [H.hci0, H.hci1] {
                // The kernel says Busy; bluetoothd answers InProgress, as for a second session,
                // but no session is left and Discovering stays false.
                let busy = await #expect(throws: DBusError.self) { try await h.scan(adapter) }
                #expect(busy?.name == "org.bluez.Error.InProgress")
                try await settle()
                #expect(try await h.get(adapter, H.adapterInterface, "Discovering") == .boolean(false))
                let stop = await #expect(throws: DBusError.self) {
                    try await h.call(adapter, H.adapterInterface, "StopDiscovery")
                }
                #expect(stop?.message == "No discovery started")
                let refused = await #expect(throws: DBusError.self) { try await h.register(broadcast, on: adapter) }
                #expect(refused?.name == "org.bluez.Error.Failed")
            }
            // A power cycle ends the kernel's scan on hci1 at once.
            try await h.set(H.hci1, H.adapterInterface, "Powered", .boolean(false))
            try await h.set(H.hci1, H.adapterInterface, "Powered", .boolean(true))
            try await h.scan(H.hci1)
            try await eventually("hci1 discovering") {
                try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(true)
            }
            try await h.call(H.hci1, H.adapterInterface, "StopDiscovery")
            try await h.register(broadcast, on: H.hci1)
            // hci0 was left alone: it works again once the kernel's round is over.
            try await eventually("hci0 discovering after the kernel's round", timeout: .seconds(6)) {
                try? await h.scan(H.hci0)  // InProgress once a session exists
                try await Task.sleep(for: .milliseconds(100))
                return try await h.get(H.hci0, H.adapterInterface, "Discovering") == .boolean(true)
            }
            await peer.close()
        }
    }

    @Test func aKilledBluetoothdsScanEndsWithItWhenConfigured() async throws {
        try await H.run({ $0.killedScanLinger = .zero }) { h in
            try await h.scan(H.hci1)
            try await h.control("Restart", [.uint32(100), .boolean(false)])
            try await eventually("org.bluez back with hci1 powered") {
                (try? await h.get(H.hci1, H.adapterInterface, "Powered")) == .boolean(true)
            }
            try await h.scan(H.hci1)
            try await eventually("hci1 discovering") {
                try await h.get(H.hci1, H.adapterInterface, "Discovering") == .boolean(true)
            }
        }
    }

    @Test func aGracefulRestartReleasesEveryAdvertisement() async throws {
        try await H.run { h in
            let peer = try await h.connect()
            let zero = try await TestAdvertisement(on: peer, path: "/test/zero", properties: TestAdvertisement.properties())
            let one = try await TestAdvertisement(on: peer, path: "/test/one", properties: TestAdvertisement.properties())
            try await h.register(zero, on: H.hci0)
            try await h.register(one, on: H.hci1)
            try await h.control("Restart", [.uint32(100), .boolean(true)])
            try await eventually("Release on both") { zero.released == 1 && one.released == 1 }
            try await eventually("org.bluez back") { try await h.client.nameOwner(of: H.bluez) != nil }
            await peer.close()
        }
    }

    @Test func removingAndAddingAnAdapter() async throws {
        try await H.run { h in
            let removed = try await SignalLog(
                h.client, DBusMatchRule(sender: H.bluez, interface: H.objectManager, member: "InterfacesRemoved"))
            let added = try await SignalLog(
                h.client, DBusMatchRule(sender: H.bluez, interface: H.objectManager, member: "InterfacesAdded"))
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement, on: H.hci1)

            try await h.control("RemoveAdapter", [.string("hci1")])
            try await eventually("InterfacesRemoved for hci1") {
                removed.all.contains { message in
                    message.body.first == .objectPath(H.hci1)
                        && message.body.last
                            == .strings([H.adapterInterface, H.advertisingInterface, "org.bluez.GattManager1"])
                }
            }
            try await eventually("Release") { advertisement.released == 1 }
            #expect(try await h.managedObjects()[H.hci1] == nil)

            try await h.control("AddAdapter", [.string("hci1")])
            try await eventually("InterfacesAdded for hci1") {
                added.all.contains { $0.body.first == .objectPath(H.hci1) }
            }
            try await eventually("hci1 powered") {
                try await h.get(H.hci1, H.adapterInterface, "Powered") == .boolean(true)
            }
            #expect(try await h.get(H.hci1, H.advertisingInterface, "ActiveInstances") == .byte(0))
            let duplicate = await #expect(throws: DBusError.self) { try await h.control("AddAdapter", [.string("hci1")]) }
            #expect(duplicate != nil)
            let bogus = await #expect(throws: DBusError.self) { try await h.control("AddAdapter", [.string("wlan0")]) }
            #expect(bogus?.name == DBusError.Name.invalidArgs.rawValue)
            await peer.close()
        }
    }

    @Test func theDropRateLosesReports() async throws {
        try await H.run({ $0.rescanInterval = .milliseconds(100) }) { h in
            try await h.control("SetDropRate", [.double(1)])
            try await h.scan(H.hci1)
            let peer = try await h.connect()
            let advertisement = try await TestAdvertisement(
                on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
            try await h.register(advertisement)
            try await eventually("dropped reports") {
                if case .uint64(let dropped)? = try await h.stats()["ReportsDropped"] { return dropped >= 3 }
                return false
            }
            #expect(try await h.devices(on: H.hci1).isEmpty)
            #expect(try await h.stats()["ReportsDelivered"] == .uint64(0))
            try await h.control("SetDropRate", [.double(0)])
            try await eventually("the device at a rescan") { try await !h.devices(on: H.hci1).isEmpty }
            let bad = await #expect(throws: DBusError.self) { try await h.control("SetDropRate", [.double(1.5)]) }
            #expect(bad != nil)
            await peer.close()
        }
    }

    @Test func aFloodEmitsBluetoothdsSignalShape() async throws {
        try await H.run { h in
            let added = try await SignalLog(
                h.client, DBusMatchRule(sender: H.bluez, interface: H.objectManager, member: "InterfacesAdded"))
            let changes = try await SignalLog(
                h.client,
                DBusMatchRule(
                    sender: H.bluez, interface: H.properties, member: "PropertiesChanged", pathNamespace: H.hci1))
            try await h.control("StartFlood", [.string("hci1"), .uint32(3), .uint32(0), .uint32(30)])
            try await eventually("InterfacesAdded for 3 devices") {
                added.all.filter { $0.body.first?.string?.hasPrefix("/org/bluez/hci1/dev_") == true }.count == 3
            }
            try await eventually("30 reports") { changes.all.count == 30 }
            let paths = Set(added.all.compactMap { $0.body.first?.string })
            for message in changes.all {
                #expect(message.signature.rawValue == "sa{sv}as")
                #expect(message.interface == H.properties)
                #expect(paths.contains(message.path?.rawValue ?? ""))
                #expect(message.body[0] == .string(H.deviceInterface))
                #expect(message.body[2] == .strings([]))
                let values = try #require(message.body[1].vardict)
                #expect(Set(values.keys) == ["ManufacturerData", "RSSI"])
                #expect(values["RSSI"]?.type == .int16)
                #expect(values["ManufacturerData"]?.type.signature == "a{qv}")
                let entries = values["ManufacturerData"]?.dictionaryEntries ?? []
                #expect(entries.count == 1)
                #expect(entries.first?.key == .uint16(0xFFFF))
                #expect(entries.first?.value.bytes?.count == 24)
            }
            try await eventually("the stats") { try await h.stats()["FloodReportsSent"] == .uint64(30) }
            let removed = try await SignalLog(
                h.client, DBusMatchRule(sender: H.bluez, interface: H.objectManager, member: "InterfacesRemoved"))
            try await h.control("StopFlood")
            #expect(try await h.devices(on: H.hci1).isEmpty)
            try await eventually("InterfacesRemoved") { removed.all.count == 3 }
        }
    }
}
