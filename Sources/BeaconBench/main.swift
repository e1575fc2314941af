// Beacon throughput benchmark. Build with `-c release`; prints a Markdown
// section for docs/BENCHMARKS.md on stdout. Run it from the repository root:
// it first recognises the test vectors (Tests/HandoffCoreTests/Vectors) and
// exits with status 1 if this build gets any of them wrong.
// `--recognise-only PASSES [BEACONS]` runs only the cold recognition with
// 1,000 accounts, for profilers (see below).
// `--flood-account DIRECTORY COUNT` writes a new account's key file (mode 0600)
// into DIRECTORY as `bench.handoff-key` and prints COUNT beacons of it, in hex,
// one per line, each from a device of its own, current now: the own beacons of
// `make bench`'s whole-daemon section.
#if canImport(Glibc)
import Glibc
#endif
import Foundation
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

/// One beacon of Tests/HandoffCoreTests/Vectors/beacon-v1.json (the fields this check reads).
struct Vector: Decodable {
    let name: String
    let accountSecret: String
    let epochLength: UInt32
    let epochIndex: UInt64
    let activityType: String
    let slot: UInt8
    let salt: String
    let headerNibble: UInt8
    let deviceID: String
    let sequence: UInt16
    let flags: UInt8
    let accountID: String
    let typeHash: String
    let payload: String
}

struct VectorFile: Decodable {
    let beacons: [Vector]
}

func hexBytes(_ text: String) -> [UInt8] {
    let digits = Array(text.utf8)
    return stride(from: 0, to: digits.count - 1, by: 2).map { UInt8(String(decoding: digits[$0...$0 + 1], as: UTF8.self), radix: 16)! }
}

func hexNumber(_ text: String) -> UInt32 { UInt32(text, radix: 16)! }

/// Recognises every test vector with the build being measured, so that the
/// figures are never those of a build (e.g. other optimisation flags) that
/// computes something else. Returns the problems found; empty means all agree.
func checkVectors(path: String) throws -> [String] {
    let file = try JSONDecoder().decode(VectorFile.self, from: Data(contentsOf: URL(fileURLWithPath: path)))
    var problems: [String] = []
    for vector in file.beacons {
        let account = try AccountKey(name: "vector", secret: hexBytes(vector.accountSecret))
        let type = try ActivityType(vector.activityType)
        var recognizer = BeaconRecognizer(
            configuration: BeaconConfiguration(epochLength: vector.epochLength), accounts: [oneAccount[0], account]
        )
        recognizer.declareActivityTypes([type, activity])
        let epoch = Epoch(index: vector.epochIndex, length: vector.epochLength)
        let now = Double(epoch.startSeconds) + Double(vector.epochLength) / 2
        let beacon: RecognizedBeacon
        do {
            beacon = try recognizer.recognize(hexBytes(vector.payload), now: now)
        } catch {
            problems.append("\(vector.name): rejected (\(error))")
            continue
        }
        let expected = BeaconFields(
            headerNibble: vector.headerNibble, epoch: epoch, slot: vector.slot, salt: hexNumber(vector.salt),
            typeHash: ActivityTypeHash(rawValue: hexNumber(vector.typeHash)), flags: BeaconFlags(rawValue: vector.flags),
            sequence: vector.sequence, device: DeviceID(rawValue: hexNumber(vector.deviceID))
        )
        if beacon.fields != expected { problems.append("\(vector.name): fields \(beacon.fields), expected \(expected)") }
        if beacon.account.description != vector.accountID || account.id.description != vector.accountID {
            problems.append("\(vector.name): account \(beacon.account), expected \(vector.accountID)")
        }
        if beacon.activityType != .known(type) { problems.append("\(vector.name): type \(beacon.activityType)") }
    }
    if file.beacons.isEmpty { problems.append("no vectors in \(path)") }
    return problems
}

let oneAccount = try makeAccounts(1)
let vectorPath = "Tests/HandoffCoreTests/Vectors/beacon-v1.json"
var vectorsChecked = "not checked (\(vectorPath) not found: run from the repository root)"
if FileManager.default.fileExists(atPath: vectorPath) {
    let problems = try checkVectors(path: vectorPath)
    guard problems.isEmpty else {
        FileHandle.standardError.write(Data(("BeaconBench: this build does not reproduce the test vectors:\n"
            + problems.joined(separator: "\n") + "\n").utf8))
        exit(1)
    }
    vectorsChecked = "this build recognises every beacon of \(vectorPath) with its exact fields"
}

// `BeaconBench --recognise-only PASSES [BEACONS]`: only the cold "recognise,
// 1,000 known accounts" case, for profilers. Prepares 1,000 accounts and
// BEACONS distinct beacons (default 200,000), then recognises all of them
// PASSES times, each pass with a fresh copy of the prepared recogniser, and
// prints the rate. Instructions per recognition are the difference between a
// run with PASSES = k and one with PASSES = 0, divided by k × BEACONS (e.g.
// under `perf stat -e instructions:u` or `valgrind --tool=callgrind`).
if let flag = CommandLine.arguments.firstIndex(of: "--flood-account") {
    let arguments = Array(CommandLine.arguments[(flag + 1)...])
    guard arguments.count == 2, let count = Int(arguments[1]), count > 0 else {
        FileHandle.standardError.write(Data("usage: BeaconBench --flood-account DIRECTORY COUNT\n".utf8))
        exit(2)
    }
    let key = try AccountKey.generate(name: "bench")
    let wall = Date().timeIntervalSince1970
    let text = Array(AccountKeyFile(key: key, created: UInt64(wall)).encoded().utf8)
    let fd = open(arguments[0] + "/bench.handoff-key", O_WRONLY | O_CREAT | O_EXCL, 0o600)
    guard fd >= 0, write(fd, text, text.count) == text.count, close(fd) == 0 else {
        FileHandle.standardError.write(Data("BeaconBench: cannot write the key file in \(arguments[0])\n".utf8))
        exit(1)
    }
    for _ in 0..<count {
        // A fresh encoder is a fresh device: its own per-epoch identity.
        var encoder = BeaconEncoder(configuration: configuration)
        let beacon = encoder.encode(account: key, activityType: activity, flags: [], now: wall)
        print(beacon.map { String(format: "%02x", $0) }.joined())
    }
    exit(0)
}

if let flag = CommandLine.arguments.firstIndex(of: "--recognise-only") {
    let arguments = CommandLine.arguments[(flag + 1)...].compactMap { Int($0) }
    let passes = arguments.first ?? 1
    let count = arguments.dropFirst().first ?? 200_000
    let accounts = try makeAccounts(1_000)
    let beacons = makeBeacons(accounts, count: count)
    var prepared = BeaconRecognizer(configuration: configuration, accounts: accounts)
    prepared.declareActivityTypes([activity])
    prepared.refresh(now: now)
    var best = Double.infinity
    for _ in 0..<passes {
        let start = threadCPUSeconds()
        var recognizer = prepared
        var accepted = 0
        for beacon in beacons {
            if let recognized = try? recognizer.recognize(beacon, now: now) {
                accepted += 1
                blackhole &+= Int(recognized.sequence)
            }
        }
        precondition(accepted == beacons.count, "only \(accepted) of \(beacons.count) beacons recognised")
        best = min(best, (threadCPUSeconds() - start) / Double(count))
    }
    if passes > 0 {
        print("recognise, 1,000 known accounts: \(formatRate(best))/s, \(formatTime(best)) (best of \(passes) passes of \(count))")
    }
    if blackhole == 42 { print("") }
    exit(0)
}

// Encoding.
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
        // (The repeat cache holds at most 2,048 of the 200,000, so nearly every one is a miss.)
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
/// How this binary was built, as scripts/bench.sh says (BEACON_BENCH_BUILD); the flags matter:
/// swift-crypto's generic entry points are specialised into HandoffCore only with
/// `-cross-module-optimization`.
let buildCommand = ProcessInfo.processInfo.environment["BEACON_BENCH_BUILD"] ?? "swift build -c release"
let cores = Int(sysconf(Int32(_SC_NPROCESSORS_ONLN)))
print(
    "Machine: \(cpuModel()), \(cores) cores, load average \(loadBefore) before and \(loadAverage()) after; "
        + "`\(buildCommand)`; best and median of \(runs) runs of \(recognizeCount) operations each "
        + "(table builds: \(runs) runs of one). Test vectors: \(vectorsChecked)."
)
if blackhole == 42 { print("") }
