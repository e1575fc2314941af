import DBusTestSupport
import Foundation
import Testing

/// handoffd under systemd's notify protocol, seen from systemd's side of NOTIFY_SOCKET.
@Suite(.serialized) struct SystemdIntegrationTests {
    /// `Type=notify` orders dependent units on READY=1, so the socket must accept
    /// connections by the time it arrives; and with `WatchdogSec=` set, the health
    /// check (daemon actor + a D-Bus round trip) must pass, so pings keep coming.
    @Test func readyArrivesOnlyOnceTheSocketAcceptsAndTheWatchdogIsPinged() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--extended-advertising"])
        let notify = try NotifySocket()
        let daemon = try await DaemonProcess(
            bus: bus, name: "a", adapter: "hci0",
            extraEnvironment: ["NOTIFY_SOCKET": notify.address, "WATCHDOG_USEC": "1000000"],
            waitForSocket: false)

        var ready: String?
        let startDeadline = ContinuousClock.now + .seconds(20)
        while ready == nil {
            guard daemon.process.isRunning else { throw TestFailure("handoffd exited: \(daemon.log)") }
            guard ContinuousClock.now < startDeadline else { throw TestFailure("no READY=1 within 20 s") }
            ready = notify.drain().first { $0.hasPrefix("READY=1") }
            if ready == nil { try await Task.sleep(for: .milliseconds(10)) }
        }
        // Connect straight away: no waiting, no retry.
        let client = try WireClient(socket: daemon.socket)
        try await client.hello()
        #expect(ready?.contains("STATUS=serving \(daemon.socket)") == true)

        // WATCHDOG_USEC=1 s: a ping every half second while healthy.
        var pings = 0
        let deadline = ContinuousClock.now + .seconds(3)
        while ContinuousClock.now < deadline {
            pings += notify.drain().filter { $0 == "WATCHDOG=1" }.count
            try await Task.sleep(for: .milliseconds(100))
        }
        #expect(pings >= 3, "expected about 6 watchdog pings in 3 s, got \(pings)")

        #expect(await daemon.terminate() == 0)
        #expect(notify.drain().contains { $0.hasPrefix("STOPPING=1") })
        withExtendedLifetime(sim) {}
    }
}
