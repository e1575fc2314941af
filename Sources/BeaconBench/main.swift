// Beacon throughput benchmark. Build with `-c release`; prints a Markdown
// section for docs/BENCHMARKS.md on stdout.
#if canImport(Glibc)
import Glibc
#endif
import HandoffCore

/// A small deterministic generator (SplitMix64), so runs are repeatable.
struct SplitMix64: RandomNumberGenerator {
    var state: UInt64
    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

let now = 1_750_000_000.0
let configuration = BeaconConfiguration.default
let activity = try ActivityType("org.handoff.bench.document")
var rng = SplitMix64(state: 42)
let runs = 5

@MainActor func makeAccounts(_ count: Int) throws -> [AccountKey] {
    try (0..<count).map { try AccountKey.generate(name: "bench \($0)", using: &rng) }
}

/// CPU time consumed by this thread, in seconds: unlike wall time, it does
/// not count the time other processes had the core, so per-core figures stay
/// meaningful on a shared machine.
func threadCPUSeconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
}

/// Seconds of thread CPU time per operation over `runs` timed passes of
/// `body`, each doing `operations` operations: the best pass and the median.
struct Timing {
    let best: Double
    let median: Double
}

func measure(operations: Int, _ body: () -> Void) -> Timing {
    var samples: [Double] = []
    for _ in 0..<runs {
        let start = threadCPUSeconds()
        body()
        samples.append((threadCPUSeconds() - start) / Double(operations))
    }
    samples.sort()
    return Timing(best: samples[0], median: samples[runs / 2])
}

/// Distinct, fresh beacons: round-robin over the accounts from one encoder.
@MainActor func makeBeacons(_ accounts: [AccountKey], count: Int) -> [[UInt8]] {
    var encoder = BeaconEncoder(configuration: configuration)
    return (0..<count).map { index in
        encoder.encode(
            account: accounts[index % accounts.count], activityType: activity, flags: .hasPayload, now: now,
            using: &rng
        )
    }
}

var blackhole = 0
var rows: [(String, Timing)] = []
let loadBefore = loadAverage()

// Encoding.
let oneAccount = try makeAccounts(1)
let encodeCount = 200_000
do {
    var encoder = BeaconEncoder(configuration: configuration)
    rows.append(("encode (seeded generator)", measure(operations: encodeCount) {
        for _ in 0..<encodeCount {
            blackhole &+= Int(encoder.encode(account: oneAccount[0], activityType: activity, flags: [], now: now, using: &rng)[1])
        }
    }))
    rows.append(("encode (system secure generator)", measure(operations: encodeCount) {
        for _ in 0..<encodeCount {
            blackhole &+= Int(encoder.encode(account: oneAccount[0], activityType: activity, flags: [], now: now)[1])
        }
    }))
}

// Recognition: every beacon is fresh, so each one is fully authenticated,
// decrypted and recorded in the replay window.
let recognizeCount = 200_000
var tableBuild = Timing(best: 0, median: 0)
var tableAdvance = Timing(best: 0, median: 0)
for accountCount in [1, 1_000] {
    let accounts = accountCount == 1 ? oneAccount : try makeAccounts(accountCount)
    let beacons = makeBeacons(accounts, count: recognizeCount)
    var prepared = BeaconRecognizer(configuration: configuration, accounts: accounts)
    prepared.declareActivityTypes([activity])
    if accountCount > 1 {
        tableBuild = measure(operations: 1) {
            var fresh = prepared
            fresh.refresh(now: now)
        }
    }
    prepared.refresh(now: now)
    if accountCount > 1 {
        tableAdvance = measure(operations: 1) {
            var advanced = prepared
            advanced.refresh(now: now + Double(configuration.epochLength))
        }
    }
    let label = accountCount == 1 ? "1 known account" : "1,000 known accounts"
    rows.append(("recognise, \(label)", measure(operations: recognizeCount) {
        var recognizer = prepared
        var accepted = 0
        for beacon in beacons {
            if let recognized = try? recognizer.recognize(beacon, now: now) {
                accepted += 1
                blackhole &+= Int(recognized.sequence)
            }
        }
        precondition(accepted == beacons.count, "only \(accepted) of \(beacons.count) beacons recognised")
    }))
    if accountCount > 1 {
        // Replays of authentic beacons: rejected after the lookup, the MAC, the
        // decryption and the replay-window lookup (nothing is recorded).
        var warmed = prepared
        for beacon in beacons { _ = try? warmed.recognize(beacon, now: now) }
        // (The repeat cache holds at most 1,024 of the 200,000, so nearly every one is a miss.)
        rows.append(("reject a replay, not in the repeat cache (MAC, decrypt, replay lookup), 1,000 accounts", measure(operations: recognizeCount) {
            var recognizer = warmed
            for beacon in beacons {
                do { _ = try recognizer.recognize(beacon, now: now) } catch { blackhole &+= 1 }
            }
        }))
        // What a scanner mostly hears: the same few beacons again and again. 64
        // distinct beacons, each heard once (recognised), then over and over:
        // repeat-cache hits, rejected as replays without a MAC or a decryption.
        let heard = Array(beacons.prefix(64))
        var listening = prepared
        for beacon in heard { _ = try? listening.recognize(beacon, now: now) }
        rows.append(("reject a repeat from the repeat cache (64 beacons heard over and over), 1,000 accounts", measure(operations: recognizeCount) {
            var recognizer = listening
            for index in 0..<recognizeCount {
                do { _ = try recognizer.recognize(heard[index & 63], now: now) } catch { blackhole &+= 1 }
            }
        }))
        let strangers: [[UInt8]] = (0..<recognizeCount).map { _ in
            var bytes = (0..<BeaconFormat.payloadLength).map { _ in UInt8.random(in: 0...255, using: &rng) }
            bytes[0] = 0x10 | bytes[0] & 0x0f
            return bytes
        }
        rows.append(("reject non-matching (unknown tag), 1,000 accounts", measure(operations: recognizeCount) {
            var recognizer = prepared
            for beacon in strangers {
                do { _ = try recognizer.recognize(beacon, now: now) } catch { blackhole &+= 1 }
            }
        }))
        let forged: [[UInt8]] = beacons.map { beacon in
            var bytes = beacon
            bytes[BeaconFormat.payloadLength - 1] ^= 0x01
            return bytes
        }
        rows.append(("reject forged (known tag, bad MAC), 1,000 accounts", measure(operations: recognizeCount) {
            var recognizer = prepared
            for beacon in forged {
                do { _ = try recognizer.recognize(beacon, now: now) } catch { blackhole &+= 1 }
            }
        }))
    }
}

/// The first line of a /proc file that starts with `prefix` (empty prefix: the first line).
func procLine(_ path: String, prefix: String = "") -> String? {
    #if canImport(Glibc)
    guard let file = fopen(path, "r") else { return nil }
    defer { fclose(file) }
    var line: UnsafeMutablePointer<CChar>?
    var capacity = 0
    defer { free(line) }
    while getline(&line, &capacity, file) > 0 {
        let text = String(cString: line!)
        if text.hasPrefix(prefix) { return text }
    }
    #endif
    return nil
}

func cpuModel() -> String {
    guard let line = procLine("/proc/cpuinfo", prefix: "model name"), let colon = line.firstIndex(of: ":") else {
        return "unknown CPU"
    }
    return line[line.index(after: colon)...].trimmingCharacters(in: " \t\n")
}

/// The 1-minute load average: figures taken on a busy machine are low.
func loadAverage() -> String {
    procLine("/proc/loadavg").flatMap { $0.split(separator: " ").first.map(String.init) } ?? "unknown"
}

extension Substring {
    func trimmingCharacters(in set: String) -> String {
        String(drop { set.contains($0) }.reversed().drop { set.contains($0) }.reversed())
    }
}

func formatRate(_ secondsPerOperation: Double) -> String {
    let rate = Int((1 / secondsPerOperation).rounded())
    var digits = Array(String(rate))
    var index = digits.count - 3
    while index > 0 {
        digits.insert(",", at: index)
        index -= 3
    }
    return String(digits)
}

func formatTime(_ seconds: Double) -> String {
    if seconds >= 1e-3 { return "\(Double(Int(seconds * 1e4)) / 10) ms" }
    return "\(Int((seconds * 1e9).rounded())) ns"
}

print("## Beacon (HandoffCore)")
print()
print("One thread; times are that thread's CPU time (CLOCK_THREAD_CPUTIME_ID), so they are per core")
print("even when other processes share the machine. Every recognised beacon is distinct and fresh, so each")
print("one is looked up, authenticated (HMAC-SHA256), decrypted (ChaCha20) and recorded in the replay window:")
print("the recognise rows are cold (no repeat-cache hit). HMAC-SHA256 and ChaCha20 are swift-crypto's")
print("(`HMAC<SHA256>`, `Insecure.ChaCha20CTR`).")
print()
print("| operation | per second (best run) | per operation (best run) | per second (median run) |")
print("|---|---:|---:|---:|")
for (name, timing) in rows {
    print("| \(name) | \(formatRate(timing.best)) | \(formatTime(timing.best)) | \(formatRate(timing.median)) |")
}
print("| build the tag table from scratch, 1,000 accounts (5 epochs × 8 slots each) | | \(formatTime(tableBuild.best)) | |")
print("| move the tag table to the next epoch, 1,000 accounts | | \(formatTime(tableAdvance.best)) | |")
print()
let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
print(
    "Machine: \(cpuModel()), \(cores) cores, load average \(loadBefore) before and \(loadAverage()) after; "
        + "`swift build -c release`; best and median of \(runs) runs of \(recognizeCount) operations each "
        + "(table builds: \(runs) runs of one)."
)
if blackhole == 42 { print("") }
