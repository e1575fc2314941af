#if canImport(Glibc)
import Glibc
#endif
import BlueZSimulator
import DBus
import DBusTestSupport
import Foundation
import Testing

/// The `handoff-sim-bluez` process itself.
@Suite struct ExecutableTests {
    static let executable = ChildProcess.builtProduct("handoff-sim-bluez")

    @Test(.enabled(if: executable != nil, "handoff-sim-bluez is not built (swift build first)"))
    func printsOneReadyLineAndExitsZeroOnSIGTERMAfterReleasing() async throws {
        let bus = try PrivateBus()
        let child = try ChildProcess(
            try #require(Self.executable), ["--bus", bus.address, "--adapters", "3", "--quiet"])
        let ready = try #require(await child.readLine(timeout: .seconds(20)))
        #expect(ready == "handoff-sim-bluez: org.bluez on \(bus.address) with hci0 hci1 hci2")

        let peer = try await DBusConnection.connect(to: .address(bus.address))
        let advertisement = try await TestAdvertisement(
            on: peer, path: "/test/adv", properties: TestAdvertisement.properties())
        try await peer.call(
            destination: "org.bluez", path: "/org/bluez/hci2", interface: "org.bluez.LEAdvertisingManager1",
            member: "RegisterAdvertisement", [.objectPath(advertisement.path), .vardict([:])])
        child.process.signal(SIGTERM)
        #expect(await child.process.exitCode(within: .seconds(20)) == 0)
        try await eventually("Release") { advertisement.released == 1 }
        await peer.close()
        bus.stop()
    }

    @Test(.enabled(if: executable != nil, "handoff-sim-bluez is not built (swift build first)"))
    func explainsItsOptions() async throws {
        let help = try ChildProcess(try #require(Self.executable), ["--help"])
        #expect(await help.readAll(timeout: .seconds(20)).contains("--temporary-timeout SEC"))
        #expect(await help.process.exitCode(within: .seconds(20)) == 0)
        let bad = try ChildProcess(try #require(Self.executable), ["--adapters", "many"])
        #expect(await bad.process.exitCode(within: .seconds(20)) == 2)
    }
}
