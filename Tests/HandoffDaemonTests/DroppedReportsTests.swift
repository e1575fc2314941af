import BlueZ
import DBus
import DBusTestSupport
import Foundation
import Logging
import Synchronization
import Testing

@testable import HandoffDaemon

/// A daemon that falls behind the radio drops scan reports: each one is
/// counted in `status` and said in the log, at most once per interval.
@Suite(.serialized, .timeLimit(.minutes(1))) struct DroppedReportsTests {
    /// The radio's warnings about drops, with when they were written.
    final class DropLines: Sendable {
        let lines = Mutex<[(at: ContinuousClock.Instant, count: UInt64)]>([])
        var counts: [UInt64] { lines.withLock { $0.map(\.count) } }
        var times: [ContinuousClock.Instant] { lines.withLock { $0.map(\.at) } }
    }

    struct Handler: LogHandler {
        let record: DropLines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            // "scan: dropped N report(s) since the last such line, …"
            let words = "\(event.message)".split(separator: " ")
            guard event.level == .warning, words.count > 2, words[1] == "dropped", let count = UInt64(words[2])
            else { return }
            record.lines.withLock { $0.append((.now, count)) }
        }
    }

    @Test func aFloodBeyondTheBufferIsCountedInStatusAndLoggedRateLimited() async throws {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--adapters", "1", "--quiet"])
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        let manager = try await BlueZObjectManager.start(on: connection)
        let lines = DropLines()
        let interval = Duration.seconds(1)
        var configuration = LERadio.Configuration()
        configuration.adapter = .name("hci0")
        configuration.reportBuffer = 16
        configuration.droppedReportLogInterval = interval
        let radio = LERadio(
            connection: connection, manager: manager, configuration: configuration,
            logger: Logger(label: "radio") { _ in Handler(record: lines) })
        let radioTask = Task { await radio.run() }
        try await eventually { await radio.status.scanning }

        // The daemon's consumer is stalled (its run loop is not started), so the
        // scanner keeps 16 reports and drops every older one.
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-drops-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let (book, _) = AccountBook.load(directory: directory.path)
        var quiet = Logger(label: "daemon")
        quiet.logLevel = .critical
        let daemon = HandoffDaemon(settings: DaemonSettings(), radio: radio, link: nil, accounts: book, logger: quiet)
        let gateway = await ClientGateway(daemon: daemon, options: .init(), logger: quiet)
        guard case .success(let wire) = await gateway.open(uid: 0, pid: 4242) else {
            throw RigError("the gateway refused a connection")
        }
        let client = TestClient(wire)
        try await client.call("hello", ["app": "test", "versions": [1]])
        #expect(try await client.call("status")["scanReportsDropped"] as? Int == 0)

        // 5 devices announced (a report each) and 200 reports: 205, of which 16 stay.
        _ = try await sim.callControl("StartFlood", [.string("hci0"), .uint32(5), .uint32(0), .uint32(200)])
        let dropped = 205 - 16
        try await eventually { await radio.status.droppedReports == UInt64(dropped) }
        let status = try await client.call("status")
        #expect(status["scanReportsDropped"] as? Int == dropped, "status: \(status)")
        let typed = await daemon.status(for: Caller(client: 1, uid: 1000, pid: 1))
        #expect(typed.scanReportsDropped == UInt64(dropped))

        // Said in the log: the first drop at once, the rest one interval later.
        try await eventually(within: .seconds(10)) { lines.counts.reduce(0, +) == UInt64(dropped) }
        let times = lines.times
        #expect(times.count >= 2, "lines: \(lines.counts)")
        for (earlier, later) in zip(times, times.dropFirst()) {
            #expect(later - earlier >= interval * 0.9, "lines \(later - earlier) apart")
        }
        // Nothing more dropped: nothing more said.
        try await Task.sleep(for: interval * 1.5)
        #expect(lines.times.count == times.count)

        // The 16 kept are still there for the daemon: together, every report.
        #expect(try await client.call("status")["scanReportsHeard"] as? Int == 0)
        let daemonTask = Task { await daemon.run() }
        try await eventually { try await client.call("status")["scanReportsHeard"] as? Int == 16 }
        daemonTask.cancel()

        radioTask.cancel()
        _ = await radioTask.value
        manager.stop()
        await connection.close()
        await sim.stop()
        bus.stop()
    }
}
