import DBusTestSupport
import Foundation
import Testing

@testable import HandoffDaemon

#if canImport(Glibc)
import Glibc
#endif

@Suite struct SystemdNotifierTests {
    @Test func withoutNotifySocketEverythingIsANoOp() throws {
        let notifier = SystemdNotifier(environment: ["WATCHDOG_USEC": "30000000"])
        #expect(!notifier.isEnabled)
        #expect(notifier.addressError == nil)
        #expect(notifier.watchdogInterval == nil)
        try notifier.ready(status: "ready")
        try notifier.watchdog()
        try notifier.stopping()
        let empty = SystemdNotifier(environment: ["NOTIFY_SOCKET": ""])
        #expect(!empty.isEnabled)
    }

    @Test func sendsExactDatagramsToAPathSocket() throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        #expect(notifier.isEnabled)

        try notifier.ready()
        #expect(socket.receive() == "READY=1")
        try notifier.ready(status: "Listening on /run/handoffd/handoffd.sock")
        #expect(socket.receive() == "READY=1\nSTATUS=Listening on /run/handoffd/handoffd.sock")
        try notifier.status("2 nearby\nactivities")
        #expect(socket.receive() == "STATUS=2 nearby activities")
        try notifier.watchdog()
        #expect(socket.receive() == "WATCHDOG=1")
        try notifier.stopping()
        #expect(socket.receive() == "STOPPING=1")
        try notifier.stopping(status: "Shutting down")
        #expect(socket.receive() == "STOPPING=1\nSTATUS=Shutting down")
        try notifier.extendTimeout(by: .milliseconds(1500))
        #expect(socket.receive() == "EXTEND_TIMEOUT_USEC=1500000")
        try notifier.send(["ERRNO=5", "STATUS=failed"])
        #expect(socket.receive() == "ERRNO=5\nSTATUS=failed")
    }

    @Test func reloadingCarriesTheMonotonicClock() throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        let before = SystemdNotifier.monotonicMicroseconds()
        try notifier.reloading(status: "Reloading configuration")
        let after = SystemdNotifier.monotonicMicroseconds()

        let message = try #require(socket.receive())
        let lines = message.split(separator: "\n").map(String.init)
        #expect(lines.count == 3)
        #expect(lines.first == "RELOADING=1")
        #expect(lines.last == "STATUS=Reloading configuration")
        let stamp = try #require(lines.dropFirst().first)
        #expect(stamp.hasPrefix("MONOTONIC_USEC="))
        let usec = try #require(UInt64(stamp.dropFirst("MONOTONIC_USEC=".count)))
        #expect((before...after).contains(usec))
    }

    @Test func sendsToAnAbstractSocket() throws {
        let socket = try NotifySocket(abstract: "handoff-test-\(UUID().uuidString)")
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
        #expect(notifier.isEnabled)
        try notifier.ready(status: "abstract")
        #expect(socket.receive() == "READY=1\nSTATUS=abstract")
    }

    @Test func watchdogIntervalComesFromTheEnvironment() throws {
        let socket = try NotifySocket()
        func interval(_ extra: [String: String]) -> Duration? {
            var environment = extra
            environment["NOTIFY_SOCKET"] = socket.address
            return SystemdNotifier(environment: environment, processID: 4242).watchdogInterval
        }
        #expect(interval([:]) == nil)
        #expect(interval(["WATCHDOG_USEC": "30000000"]) == .seconds(30))
        #expect(interval(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"]) == .seconds(30))
        #expect(interval(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": ""]) == .seconds(30))
        #expect(interval(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"]) == nil)
        #expect(interval(["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "x"]) == nil)
        #expect(interval(["WATCHDOG_USEC": "0"]) == nil)
        #expect(interval(["WATCHDOG_USEC": "-5"]) == nil)
        #expect(interval(["WATCHDOG_USEC": "soon"]) == nil)
        // The real process ID is the default.
        let mine = SystemdNotifier(environment: [
            "NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "1000", "WATCHDOG_PID": "\(getpid())",
        ])
        #expect(mine.watchdogInterval == .milliseconds(1))
    }

    @Test func unusableAddressesAreReportedNotUsed() throws {
        let vsock = SystemdNotifier(environment: ["NOTIFY_SOCKET": "vsock:2:1234", "WATCHDOG_USEC": "1000000"])
        #expect(!vsock.isEnabled)
        #expect(vsock.addressError == .unsupportedAddress("vsock:2:1234"))
        #expect(vsock.watchdogInterval == nil)
        try vsock.ready()

        let long = "/" + String(repeating: "x", count: 108)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": long]).addressError == .addressTooLong(long))
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": "@"]).addressError == .unsupportedAddress("@"))
        // 107 bytes of path plus the terminator still fit.
        let fits = "/" + String(repeating: "x", count: 106)
        #expect(SystemdNotifier(environment: ["NOTIFY_SOCKET": fits]).isEnabled)
    }

    @Test func sendingToNobodyThrows() throws {
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": "/nonexistent/handoff/notify"])
        #expect(notifier.isEnabled)
        #expect(throws: SystemdNotifyError.system(call: "sendto", errno: ENOENT)) {
            try notifier.ready()
        }
    }

    @Test func watchdogLoopPingsAtHalfTheInterval() async throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "200000"])
        #expect(notifier.watchdogInterval == .milliseconds(200))
        let start = ContinuousClock.now
        let loop = Task { await notifier.runWatchdog() }
        var pings: [String] = []
        // Poll without blocking a thread: the loop needs one to run on.
        let deadline = ContinuousClock.now + .seconds(10)
        while pings.count < 3, ContinuousClock.now < deadline {
            if let message = socket.receive(timeout: 0) {
                pings.append(message)
            } else {
                try await Task.sleep(for: .milliseconds(5))
            }
        }
        let elapsed = ContinuousClock.now - start
        loop.cancel()
        await loop.value
        #expect(pings == ["WATCHDOG=1", "WATCHDOG=1", "WATCHDOG=1"])
        // The first ping goes at once, then one every 100 ms: never faster.
        #expect(elapsed >= .milliseconds(190), "three pings in \(elapsed)")
    }

    @Test func watchdogLoopSkipsPingsWhileUnhealthy() async throws {
        let socket = try NotifySocket()
        let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "100000"])
        let loop = Task { await notifier.runWatchdog(isHealthy: { false }) }
        try await Task.sleep(for: .milliseconds(200))
        loop.cancel()
        await loop.value
        #expect(socket.drain().isEmpty)
    }

    @Test func watchdogLoopReturnsAtOnceWithoutAWatchdog() async {
        await SystemdNotifier(environment: [:]).runWatchdog()
    }
}
