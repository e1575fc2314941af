#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import HandoffKit
import HandoffProtocol
import Testing

/// handoffd's address-privacy gate (issue 7) on the simulated air: a connectable
/// advertisement only with LE privacy on, and `status`, `handoffctl status` and
/// `handoffctl doctor` saying so. This host's kernel has no Bluetooth, so the
/// kernel cannot be asked and handoffd falls back to the main.conf it is given;
/// on a host with Bluetooth the simulated adapters' names may be real ones, and
/// only what does not depend on the real kernel is checked.
@Suite struct AddressPrivacySystemTests {
    /// Whether this host's kernel has Bluetooth sockets at all.
    static var kernelHasBluetooth: Bool {
        let probe = socket(AF_BLUETOOTH, Int32(SOCK_RAW.rawValue), 1)
        if probe >= 0 { close(probe) }
        return probe >= 0 || errno != EAFNOSUPPORT
    }

    static func statusJSON(of daemon: DaemonProcess, in directory: String) async throws -> StatusResult {
        let outcome = try await CtlProcess.run(["status", "--json", "--socket", daemon.socket], in: directory)
        #expect(outcome.status == 0, "stderr: \(outcome.stderr)")
        return try JSONDecoder().decode(StatusResult.self, from: Data(outcome.stdout.utf8))
    }

    @Test func privacyOffRefusesPeripheralAndEveryToolSaysWhy() async throws {
        guard !Self.kernelHasBluetooth else { return }  // the kernel, not main.conf, would decide
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-privacy-\(UUID())").path
        try FileManager.default.createDirectory(atPath: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        let mainConf = "\(scratch)/main.conf"
        try "[General]\n#Privacy = device\nPrivacy = off\n".write(toFile: mainConf, atomically: true, encoding: .utf8)
        let laptops = try await TwoLaptops(
            originBluetoothSettings: """
                advertisement_type = "peripheral"
                bluetoothd_main_conf = "\(mainConf)"
                """)
        let publisher = HandoffClient(configuration: .init(app: "org.handoff.test.publisher", socketPath: laptops.a.socket))
        let activity = UserActivity(type: TwoLaptops.type, client: publisher)
        activity.title = "Not connectable"
        activity.webpageURL = URL(string: "https://example.org/")
        let reader = HandoffClient(configuration: .init(app: "org.handoff.test.reader", socketPath: laptops.b.socket))
        try await activity.becomeCurrent()
        try await eventually { try await reader.list().count == 1 }
        let nearby = try await reader.list()[0]

        // The status says why, with the fix; the advertisement was broadcast, so B cannot connect.
        let status = try await Self.statusJSON(of: laptops.a, in: laptops.bus.directory)
        let continuation = try #require(status.continuation)
        #expect(continuation.state == "unavailable" && continuation.addressPrivacy == "unknown")
        #expect(continuation.adapter == "hci0")
        #expect(continuation.reason.contains("advertisement_type = \"peripheral\" refused"), "\(continuation.reason)")
        #expect(continuation.reason.contains("this kernel has no Bluetooth support"), "\(continuation.reason)")
        #expect(continuation.reason.contains("Privacy = off"), "\(continuation.reason)")
        #expect(continuation.fix?.contains("Privacy = device") == true)
        let error = await #expect(throws: ContinueError.self) {
            _ = try await reader.continue(nearby, timeout: .seconds(2))
        }
        #expect(error?.code == .outOfRange, "\(String(describing: error))")

        let text = try await CtlProcess.run(["status", "--socket", laptops.a.socket], in: laptops.bus.directory)
        #expect(text.stdout.contains("continuation: unavailable: advertisement_type = \"peripheral\" refused"), "\(text.stdout)")
        #expect(text.stdout.contains("; fix: set Privacy = device in [General] of \(mainConf)"), "\(text.stdout)")
        let doctor = try await CtlProcess.run(["doctor", "--socket", laptops.a.socket], in: laptops.bus.directory)
        #expect(doctor.status == 1)
        #expect(doctor.stdout.contains("✗ activities published here cannot be continued: "), "\(doctor.stdout)")
        #expect(doctor.stdout.contains("— fix: set Privacy = device"), "\(doctor.stdout)")

        // Logged once at error level, however often the adapter changes.
        #expect(laptops.a.log.components(separatedBy: "advertisement_type = \"peripheral\" refused").count == 2, "\(laptops.a.log)")
        let log = laptops.a.log
        #expect(!log.contains("account key"), "keys never appear")

        await reader.close()
        await publisher.close()
        await laptops.stop()
    }

    @Test func privacyFromMainConfLetsItBeContinuedAndSaysUnverified() async throws {
        // DaemonProcess gives A a main.conf with Privacy = device.
        let laptops = try await TwoLaptops()
        try await eventually {
            (try await Self.statusJSON(of: laptops.a, in: laptops.bus.directory)).continuation?.adapter == "hci0"
        }
        let status = try await Self.statusJSON(of: laptops.a, in: laptops.bus.directory)
        let continuation = try #require(status.continuation)
        if !Self.kernelHasBluetooth {
            #expect(continuation.state == "available" && continuation.addressPrivacy == "unknown")
            #expect(continuation.reason.hasPrefix("LE privacy unverified on hci0: the kernel cannot be asked (this kernel has no Bluetooth support"), "\(continuation.reason)")
            #expect(continuation.fix == nil)
            let text = try await CtlProcess.run(["status", "--socket", laptops.a.socket], in: laptops.bus.directory)
            #expect(text.stdout.contains("continuation: available (LE privacy unverified on hci0"), "\(text.stdout)")
            let doctor = try await CtlProcess.run(["doctor", "--json", "--socket", laptops.a.socket], in: laptops.bus.directory)
            let report = try JSONSerialization.jsonObject(with: Data(doctor.stdout.utf8)) as? [String: Any]
            let checks = report?["checks"] as? [[String: Any]] ?? []
            let check = checks.first { $0["name"] as? String == "continuation" }
            #expect(check?["ok"] as? Bool == true, "\(doctor.stdout)")
            #expect(laptops.a.log.contains("relying on"), "warned once that privacy is unverified")
        }
        await laptops.stop()
    }
}
