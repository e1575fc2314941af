// ScanBench: what the BlueZ layer's scanner costs per report. Run by
// scripts/bench.sh (`make bench`, section "Scanning"), next to scan-floor, a
// minimal libdbus client in C that receives and decodes the same signals.
//
//   ScanBench BUS_ADDRESS COMPANY EXPECTED IDLE_SECONDS [ADAPTER]
//
// It takes the path handoffd takes: a BlueZObjectManager on its own connection,
// an LERadio on ADAPTER (default hci0) that sets the discovery filter and
// starts discovery, and a task reading `LERadio.scanEvents` (the stream
// HandoffDaemon.run consumes). It counts the reports that carry COMPANY.
//
// The simulator's flood (StartFlood) numbers its reports in the first 8 bytes of
// the payload (big-endian); the InterfacesAdded that announce its devices all
// carry number 0. The measured window opens at the first report numbered 1 or
// more and closes at the report that makes EXPECTED, or, when reports were
// lost, at the last CPU sample before IDLE_SECONDS passed without a report.
//
// It prints "ready PID" once scanning, then, at the end, one `key=value` per
// line: the same keys as scan-floor. CPU time is the whole process's (user +
// system, getrusage), so the D-Bus thread, the object-manager mirror, the
// scanner and the consuming task all count.
#if canImport(Glibc)
import Glibc
#endif
import BlueZ
import DBus
import Synchronization

func fail(_ message: String) -> Never {
    let line = Array("ScanBench: \(message)\n".utf8)
    _ = line.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
    exit(1)
}

func say(_ line: String) {
    print(line)
    fflush(nil)
}

/// User plus system CPU time of the whole process, in seconds.
func cpuSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_SELF.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)
        + Double(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6
}

func wallSeconds() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// `VmRSS` or `VmHWM` from /proc/self/status, in KiB (-1 if unreadable).
func statusKiB(_ key: String) -> Int {
    guard let file = fopen("/proc/self/status", "r") else { return -1 }
    defer { fclose(file) }
    var line = [CChar](repeating: 0, count: 256)
    let prefix = key + ":"
    while fgets(&line, Int32(line.count), file) != nil {
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text.hasPrefix(prefix) {
            return Int(String(text.dropFirst(prefix.count).filter(\.isNumber))) ?? -1
        }
    }
    return -1
}

let arguments = CommandLine.arguments
guard arguments.count == 5 || arguments.count == 6 else {
    fail("usage: ScanBench BUS_ADDRESS COMPANY EXPECTED IDLE_SECONDS [ADAPTER]")
}
let busAddress = arguments[1]
guard let company = UInt16(arguments[2].hasPrefix("0x") ? String(arguments[2].dropFirst(2)) : arguments[2],
        radix: arguments[2].hasPrefix("0x") ? 16 : 10),
    let expected = UInt64(arguments[3]), let idleSeconds = Double(arguments[4])
else { fail("bad arguments: \(arguments.dropFirst())") }
let adapterName = arguments.count == 6 ? arguments[5] : "hci0"

/// When the last report arrived (monotonic nanoseconds), for the idle timeout.
let lastReport = Atomic<UInt64>(0)

func nanosecondsNow() -> UInt64 {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
}

/// The figures of one run, kept by the consuming task.
struct Tally {
    var received: UInt64 = 0
    var initial: UInt64 = 0
    var highest: UInt64 = 0
    var sampleCount: UInt64 = 0
    var firstCPU = 0.0, lastCPU = 0.0, firstWall = 0.0, lastWall = 0.0
    var rssMid = -1
    var rssiSum: Int64 = 0

    mutating func sample() {
        sampleCount = received
        lastCPU = cpuSeconds()
        lastWall = wallSeconds()
    }
}

let connection: DBusConnection
do {
    connection = try await DBusConnection.connect(to: .address(busAddress))
} catch {
    fail("cannot connect to \(busAddress): \(error)")
}
let manager = try await BlueZObjectManager.start(on: connection)
var configuration = LERadio.Configuration()
configuration.adapter = .name(adapterName)
configuration.companyID = company
let radio = LERadio(connection: connection, manager: manager, configuration: configuration)
let radioTask = Task { await radio.run() }

// Ready means what it means for handoffd: the filter is set and discovery runs.
let readyBy = wallSeconds() + 20
while true {
    if case .ready = await radio.status.phase { break }
    if wallSeconds() > readyBy { fail("the radio did not become ready: \(await radio.status.phase)") }
    try await Task.sleep(for: .milliseconds(20))
}
let rssStart = statusKiB("VmRSS")
say("ready \(getpid())")

/// Reads the scan events the way `HandoffDaemon.run` does: an actor iterating
/// `LERadio.scanEvents`, off the main actor.
actor Consumer {
    func run(_ events: ScanEvents, company: UInt16, expected: UInt64) async -> Tally {
        var tally = Tally()
        for await event in events {
            guard case .report(let report) = event, report.companyID == company, report.data.count >= 8 else {
                continue
            }
            lastReport.store(nanosecondsNow(), ordering: .relaxed)
            if let rssi = report.rssi { tally.rssiSum += Int64(rssi) }
            var number: UInt64 = 0
            for byte in report.data[0..<8] { number = number << 8 | UInt64(byte) }
            if number == 0 {
                tally.initial += 1
                continue
            }
            tally.highest = max(tally.highest, number)
            if tally.received == 0 {
                tally.firstCPU = cpuSeconds()
                tally.firstWall = wallSeconds()
            }
            tally.received += 1
            if tally.received == expected / 2 { tally.rssMid = statusKiB("VmRSS") }
            if tally.received % 1024 == 0 || tally.received == expected { tally.sample() }
            if tally.received >= expected { break }
        }
        return tally
    }
}

let events = radio.scanEvents
let consumer = Task.detached { await Consumer().run(events, company: company, expected: expected) }

// The idle timeout: once reports have started, stop after IDLE_SECONDS without one.
// Checked once a second: the floor checks in its own loop without waking for it,
// and ten wakeups a second here would count against the BlueZ layer at 1k/s.
let watchdog = Task {
    while !Task.isCancelled {
        try? await Task.sleep(for: .seconds(1))
        let last = lastReport.load(ordering: .relaxed)
        if last != 0 && Double(nanosecondsNow() - last) / 1e9 > idleSeconds {
            consumer.cancel()
            return
        }
    }
}

let tally = await consumer.value
watchdog.cancel()
let rssEnd = statusKiB("VmRSS")
let rssPeak = statusKiB("VmHWM")
let counters = await radio.scanner.counters
say(
    """
    receiver=swift-bluez
    received=\(tally.received)
    window_reports=\(tally.sampleCount > 0 ? tally.sampleCount - 1 : 0)
    initial=\(tally.initial)
    highest=\(tally.highest)
    dropped=\(counters.dropped)
    cpu_seconds=\(tally.sampleCount > 0 ? tally.lastCPU - tally.firstCPU : 0)
    wall_seconds=\(tally.sampleCount > 0 ? tally.lastWall - tally.firstWall : 0)
    rss_start_kib=\(rssStart)
    rss_mid_kib=\(tally.rssMid)
    rss_end_kib=\(rssEnd)
    rss_peak_kib=\(rssPeak)
    rssi_sum=\(tally.rssiSum)
    """)
radioTask.cancel()
_ = await radioTask.value
manager.stop()
await connection.close()
exit(0)
