// DBusBench roles: each runs as its own process (see main.swift).
#if canImport(Glibc)
import Glibc
#endif
import DBus
import Foundation

func serve(_ name: String) async throws {
    let connection = try await DBusConnection.connect(to: .session)
    _ = try await connection.export(
        benchPath,
        interfaces: [
            DBusInterface(benchInterface, methods: [DBusMethod("Echo", inputs: "s", outputs: "s") { call in call.body }])
        ])
    try await connection.requestName(name)
    await connection.waitUntilClosed()
}

func callLoop(_ name: String, seconds: Double, depth: Int) async throws {
    let connection = try await DBusConnection.connect(to: .session)
    let message = DBusMessage.methodCall(
        destination: name, path: benchPath, interface: benchInterface, member: "Echo", body: [.string(payload)])
    _ = try await connection.call(message)  // warm up
    let start = now()
    let deadline = start + seconds
    let total = try await withThrowingTaskGroup(of: Int.self) { group in
        for _ in 0..<max(1, depth) {
            group.addTask {
                var count = 0
                repeat {
                    for _ in 0..<100 {
                        let reply = try await connection.call(message)
                        guard case .string(let text)? = reply.body.first, text == payload else { fail("wrong reply \(reply)") }
                    }
                    count += 100
                } while now() < deadline
                return count
            }
        }
        return try await group.reduce(0, +)
    }
    emit(String(format: "calls %d seconds %.6f", total, now() - start))
    await connection.close()
}

func receive(_ name: String) async throws {
    let connection = try await DBusConnection.connect(to: .session)
    let signals = try await connection.signals(matching: DBusMatchRule(interface: benchInterface, path: benchPath))
    try await connection.requestName(name)
    var count = 0
    var first: Double?
    for try await signal in signals {
        if signal.member == "Tick" {
            if first == nil { first = now() }
            count += 1
        } else if signal.member == "Stop" {
            break
        }
    }
    emit(String(format: "signals %d seconds %.6f", count, first.map { now() - $0 } ?? 0))
    await connection.close()
}

func emitLoop(_ receiver: String, seconds: Double) async throws {
    let connection = try await DBusConnection.connect(to: .session)
    let deadline = now() + seconds
    var index: UInt32 = 0
    repeat {
        for _ in 0..<256 {
            try connection.emitSignal(path: benchPath, interface: benchInterface, member: "Tick", [.uint32(index)])
            index &+= 1
        }
        try await connection.call(destination: receiver, path: .root, interface: "org.freedesktop.DBus.Peer", member: "Ping")
    } while now() < deadline
    try connection.emitSignal(path: benchPath, interface: benchInterface, member: "Stop")
    // A round trip to the bus after Stop: once it answers, Stop is on its way.
    _ = try await connection.listNames()
    emit("emitted \(index)")
    await connection.close()
}

/// Per-thread context switches of this process: tid → (name, voluntary + involuntary).
func contextSwitches() -> [Int32: (name: String, switches: Int)] {
    var out: [Int32: (String, Int)] = [:]
    guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [:] }
    for task in tasks {
        guard let tid = Int32(task), let status = try? String(contentsOfFile: "/proc/self/task/\(task)/status", encoding: .utf8)
        else { continue }
        var name = "?"
        var switches = 0
        for line in status.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard parts.count == 2 else { continue }
            switch parts[0] {
            case "Name": name = parts[1]
            case "voluntary_ctxt_switches", "nonvoluntary_ctxt_switches": switches += Int(parts[1]) ?? 0
            default: break
            }
        }
        out[tid] = (name, switches)
    }
    return out
}

func currentThreadID() -> Int32 {
    let target = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self")) ?? ""
    return target.split(separator: "/").last.flatMap { Int32($0) } ?? -1
}

/// Blocks the calling thread in nanosleep for `seconds` and returns every thread's
/// context switches over that time: tid → (name, switches), the caller marked.
func measureSleep(_ seconds: Double) -> (me: Int32, deltas: [Int32: (name: String, switches: Int)]) {
    let me = currentThreadID()
    let before = contextSwitches()
    // One nanosleep: the calling thread itself wakes exactly once, at the end.
    var request = timespec(tv_sec: Int(seconds), tv_nsec: Int((seconds - seconds.rounded(.down)) * 1e9))
    var remaining = timespec()
    while nanosleep(&request, &remaining) != 0 && errno == EINTR { request = remaining }
    let after = contextSwitches()
    var deltas: [Int32: (String, Int)] = [:]
    for (tid, entry) in after { deltas[tid] = (entry.name, entry.switches - (before[tid]?.switches ?? 0)) }
    return (me, deltas)
}

/// Prints "<label> wakeups N dbus-loop L seconds S" (N: every thread but the sleeping
/// one; L: the connection's loop thread) and one line per thread.
func printWakeups(_ label: String, _ seconds: Double, _ result: (me: Int32, deltas: [Int32: (name: String, switches: Int)])) {
    var total = 0
    var loop = 0
    var lines: [String] = []
    for (tid, entry) in result.deltas.sorted(by: { $0.key < $1.key }) {
        let mark = tid == result.me ? " (the sleeping thread, not counted)" : ""
        lines.append("  thread \(tid) \(entry.name): \(entry.switches)\(mark)")
        if tid != result.me { total += entry.switches }
        if entry.name == "dbus-loop" { loop += entry.switches }
    }
    emit("\(label) wakeups \(total) dbus-loop \(loop) seconds \(seconds)")
    for line in lines { emit(line) }
}

/// Measures wakeups twice: with no connection (what the Swift runtime does on its
/// own), then connected, with an exported object, a subscription and a name.
func idle(seconds: Double, baseline: Bool) async throws {
    if baseline {
        try await Task.sleep(for: .milliseconds(300))
        printWakeups("baseline", seconds, measureSleep(seconds))
    }
    let connection = try await DBusConnection.connect(to: .session)
    let object = try await connection.export(
        benchPath,
        interfaces: [
            DBusInterface(
                benchInterface, methods: [DBusMethod("Echo", inputs: "s", outputs: "s") { call in call.body }],
                properties: [DBusProperty("Level", Int32(1), access: .readwrite)])
        ])
    let signals = try await connection.signals(matching: DBusMatchRule(interface: benchInterface, member: "Tick"))
    let consumer = Task { for try await _ in signals {} }
    try await connection.requestName("org.handoff.Bench.Idle")
    _ = try await connection.listNames()
    // Let every thread that the setup woke go back to sleep.
    try await Task.sleep(for: .milliseconds(300))
    emit("ready \(getpid())")
    printWakeups("connected", seconds, measureSleep(seconds))
    consumer.cancel()
    _ = object
    await connection.close()
}
