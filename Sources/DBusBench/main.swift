// DBusBench: throughput and idle cost of the DBus module, side by side with
// python3-dbus on the same private bus. Run by scripts/bench.sh (`make bench`),
// which starts the bus and exports DBUS_SESSION_BUS_ADDRESS.
//
//   DBusBench report --peer PATH [--python PATH] [--seconds S] [--rounds N]
//       runs every scenario below N times (spawning the roles as processes) and prints
//       a Markdown section with the best run of each
//   DBusBench serve NAME                    Echo(s)->s server at /bench, owns NAME
//   DBusBench call NAME SECONDS DEPTH       calls NAME's Echo for SECONDS with DEPTH
//                                           calls in flight; prints "calls N seconds S"
//   DBusBench receive NAME                  counts Tick signals until Stop, owns NAME once
//                                           subscribed; prints "signals N seconds S"
//   DBusBench emit RECEIVER SECONDS         emits Tick for SECONDS (a Peer.Ping round trip
//                                           to RECEIVER every 256), then Stop
//   DBusBench idle SECONDS [--no-baseline]  sleeps SECONDS unconnected (the Swift runtime's own
//                                           wakeups), then connects, exports, subscribes, owns a
//                                           name, prints "ready PID" and sleeps SECONDS again;
//                                           reports each thread's context switches over each sleep
//
// The python roles are Tests/DBusTests/Peers/peer.py bench-serve, bench-call,
// bench-receive and bench-emit: the same protocol, written with python3-dbus.
#if canImport(Glibc)
import Glibc
#endif
import DBus
import Foundation

let benchInterface = "org.handoff.Bench"
let benchPath: DBusObjectPath = "/bench"
let payload = "handoff"

func fail(_ message: String) -> Never {
    FileHandle.standardError.write(Data("DBusBench: \(message)\n".utf8))
    exit(1)
}

func now() -> Double {
    var ts = timespec()
    clock_gettime(CLOCK_MONOTONIC, &ts)
    return Double(ts.tv_sec) + Double(ts.tv_nsec) / 1e9
}

/// Writes one line to stdout at once (no buffering: the orchestrator reads it after exit or kill).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

// MARK: - Roles

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

// MARK: - Report: run every scenario and print Markdown

/// A child process with its stdout in a pipe, killed by PID when done with.
final class Child {
    let pid: pid_t
    let label: String
    private let output: Int32
    private var reaped = false

    init(_ executable: String, _ arguments: [String], environment: [String: String], label: String) throws {
        self.label = label
        var fds: [Int32] = [0, 0]
        guard pipe(&fds) == 0 else { throw DBusError(.failed, "pipe failed") }
        _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
        _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, fds[1], 1)
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var empty = sigset_t()
        sigemptyset(&empty)
        posix_spawnattr_setsigmask(&attributes, &empty)
        var all = sigset_t()
        sigfillset(&all)
        sigdelset(&all, SIGKILL)
        sigdelset(&all, SIGSTOP)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        defer { argv.forEach { free($0) } }
        let env = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { env.forEach { free($0) } }
        var child: pid_t = 0
        let rc = posix_spawn(&child, executable, &actions, &attributes, argv, env)
        close(fds[1])
        guard rc == 0 else {
            close(fds[0])
            throw DBusError(.failed, "cannot start \(executable): \(String(cString: strerror(rc)))")
        }
        pid = child
        output = fds[0]
    }

    deinit {
        kill()
        close(output)
    }

    var isRunning: Bool {
        if reaped { return false }
        var status: Int32 = 0
        if waitpid(pid, &status, WNOHANG) == pid {
            reaped = true
            return false
        }
        return true
    }

    func kill() {
        guard !reaped else { return }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        reaped = true
    }

    /// Waits for the process to exit (killing it after `limit` seconds) and returns its stdout.
    func finish(within limit: Double) async -> String {
        let deadline = now() + limit
        while isRunning && now() < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        kill()
        var data = [UInt8]()
        var buffer = [UInt8](repeating: 0, count: 4096)
        let flags = fcntl(output, F_GETFL)
        _ = fcntl(output, F_SETFL, flags | O_NONBLOCK)
        while true {
            let n = read(output, &buffer, buffer.count)
            if n <= 0 { break }
            data += buffer[0..<n]
        }
        return String(decoding: data, as: UTF8.self)
    }
}

/// True once `pid` (a child not yet reaped) has exited: it is a zombie, or gone.
func hasExited(_ pid: pid_t) -> Bool {
    guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
        let close = stat.lastIndex(of: ")")
    else { return true }
    return stat[stat.index(after: close)...].trimmingCharacters(in: .whitespaces).hasPrefix("Z")
}

struct Measurement {
    var count: Int
    var seconds: Double
    var rate: Double { seconds > 0 ? Double(count) / seconds : 0 }
}

/// Parses "<word> N seconds S" from a role's output.
func parse(_ output: String, _ word: String) -> Measurement? {
    for line in output.split(separator: "\n") {
        let parts = line.split(separator: " ")
        if parts.count == 4, parts[0] == word, let count = Int(parts[1]), parts[2] == "seconds", let seconds = Double(parts[3]) {
            return Measurement(count: count, seconds: seconds)
        }
    }
    return nil
}

final class Reporter {
    let python: String
    let peer: String
    let me: String
    let seconds: Double
    let environment: [String: String]
    let connection: DBusConnection
    var counter = 0

    init(python: String, peer: String, seconds: Double, connection: DBusConnection) {
        self.python = python
        self.peer = peer
        self.seconds = seconds
        self.connection = connection
        me = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        environment = ProcessInfo.processInfo.environment
    }

    enum Side: String {
        case swift = "Swift (DBus module)"
        case python = "python3-dbus"
    }

    func start(_ side: Side, _ arguments: [String], label: String) throws -> Child {
        switch side {
        case .swift: try Child(me, arguments, environment: environment, label: label)
        case .python: try Child(python, [peer] + arguments, environment: environment, label: label)
        }
    }

    func uniqueName(_ role: String) -> String {
        counter += 1
        return "org.handoff.Bench.\(role)\(counter)"
    }

    /// Waits until `name` has an owner; fails if `child` exits first or 30 s pass.
    func waitForName(_ name: String, _ child: Child) async throws {
        let owners = try await connection.nameOwnerChanges(of: name)
        let pid = child.pid
        let owned = try await withThrowingTaskGroup(of: Bool.self) { group in
            group.addTask {
                for try await owner in owners where owner != nil { return true }
                return false
            }
            group.addTask {
                // Polls without reaping, so that Child keeps track of its process.
                let deadline = now() + 30
                while now() < deadline {
                    if hasExited(pid) { return false }
                    try await Task.sleep(for: .milliseconds(10))
                }
                return false
            }
            defer { group.cancelAll() }
            return try await group.next() ?? false
        }
        guard owned else { throw DBusError(.failed, "\(child.label) never owned \(name)") }
    }

    func calls(client: Side, server: Side, depth: Int) async -> Measurement? {
        let name = uniqueName("Server")
        do {
            let serverProcess = try start(server, [server == .swift ? "serve" : "bench-serve", name], label: "server")
            defer { serverProcess.kill() }
            try await waitForName(name, serverProcess)
            let clientProcess = try start(
                client, [client == .swift ? "call" : "bench-call", name, String(seconds), String(depth)], label: "client")
            let output = await clientProcess.finish(within: seconds + 60)
            return parse(output, "calls")
        } catch {
            FileHandle.standardError.write(Data("DBusBench: calls \(client) -> \(server): \(error)\n".utf8))
            return nil
        }
    }

    func signals(emitter: Side, receiver: Side) async -> Measurement? {
        let name = uniqueName("Receiver")
        do {
            let receiverProcess = try start(receiver, [receiver == .swift ? "receive" : "bench-receive", name], label: "receiver")
            defer { receiverProcess.kill() }
            try await waitForName(name, receiverProcess)
            let emitterProcess = try start(emitter, [emitter == .swift ? "emit" : "bench-emit", name, String(seconds)], label: "emitter")
            defer { emitterProcess.kill() }
            let output = await receiverProcess.finish(within: seconds + 60)
            return parse(output, "signals")
        } catch {
            FileHandle.standardError.write(Data("DBusBench: signals \(emitter) -> \(receiver): \(error)\n".utf8))
            return nil
        }
    }
}

func short(_ side: Reporter.Side) -> String { side == .swift ? "Swift" : "python" }

func formatRate(_ m: Measurement?) -> String {
    guard let m else { return "failed" }
    return String(format: "%.0f", m.rate)
}

func ratio(_ m: Measurement?, _ base: Measurement?) -> String {
    guard let m, let base, base.rate > 0 else { return "–" }
    return String(format: "%.2f×", m.rate / base.rate)
}

/// One measured configuration.
struct Scenario: Hashable {
    enum Kind: Hashable { case calls(depth: Int), signals }
    var kind: Kind
    var from: Reporter.Side
    var to: Reporter.Side
}

func report(peer: String, python: String, seconds: Double, rounds: Int) async throws {
    guard FileManager.default.fileExists(atPath: peer) else { fail("no python peer at \(peer)") }
    let connection = try await DBusConnection.connect(to: .session)
    let reporter = Reporter(python: python, peer: peer, seconds: seconds, connection: connection)

    func calls(_ from: Reporter.Side, _ to: Reporter.Side, _ depth: Int) -> Scenario {
        Scenario(kind: .calls(depth: depth), from: from, to: to)
    }
    func signals(_ from: Reporter.Side, _ to: Reporter.Side) -> Scenario { Scenario(kind: .signals, from: from, to: to) }
    let scenarios = [
        calls(.python, .python, 1), calls(.swift, .swift, 1), calls(.swift, .python, 1), calls(.python, .swift, 1),
        calls(.python, .python, 64), calls(.swift, .swift, 64),
        signals(.python, .python), signals(.swift, .swift), signals(.python, .swift), signals(.swift, .python),
    ]
    // Every scenario once per round, rounds one after the other, so that a burst of
    // load from elsewhere on the machine spoils one run of each, not every run of one.
    var best: [Scenario: Measurement] = [:]
    for round in 1...max(1, rounds) {
        for scenario in scenarios {
            let measured: Measurement? =
                switch scenario.kind {
                case .calls(let depth): await reporter.calls(client: scenario.from, server: scenario.to, depth: depth)
                case .signals: await reporter.signals(emitter: scenario.from, receiver: scenario.to)
                }
            if let measured, measured.rate > (best[scenario]?.rate ?? -1) { best[scenario] = measured }
        }
        emitProgress("round \(round) of \(rounds) done")
    }
    func row(_ scenario: Scenario, base: Scenario, depth: Int? = nil) -> String {
        let name = "\(short(scenario.from)) → \(short(scenario.to))"
        let depthColumn = depth.map { " \($0) |" } ?? ""
        return "| \(name) |\(depthColumn) \(formatRate(best[scenario])) | \(ratio(best[scenario], best[base])) |"
    }

    var lines: [String] = []
    lines.append("## D-Bus: the DBus module against python3-dbus")
    lines.append("")
    lines.append(
        "One private `dbus-daemon`; every role is its own process. A call is `Echo(s) -> s` with a 7-byte "
            + "string; a signal is `Tick(u)`. Each figure is the best of \(rounds) runs of \(formatSeconds(seconds)) s, "
            + "the runs of all rows interleaved. The ratio compares the row with python3-dbus doing the same thing "
            + "(python client to python server, python emitter to python receiver).")
    lines.append("")
    lines.append("### Method calls")
    lines.append("")
    lines.append("| client → server | calls in flight | calls/s | vs python3-dbus |")
    lines.append("|---|---:|---:|---:|")
    for depth in [1, 64] {
        let base = calls(.python, .python, depth)
        for scenario in scenarios where scenario.kind == .calls(depth: depth) && scenario != base {
            lines.append(row(scenario, base: base, depth: depth))
            if scenario == calls(.swift, .swift, depth) { lines.append(row(base, base: base, depth: depth)) }
        }
    }
    lines.append("")
    lines.append("Sequential calls (1 in flight) measure round-trip latency: client → bus → server → bus → client. "
        + "With 64 in flight the client pipelines (64 tasks for Swift, 64 outstanding `call_async` for python) and "
        + "the server and bus become the limit.")
    lines.append("")
    lines.append("What differs per round trip: a Swift call changes threads four times. The calling task hands the "
        + "message to the connection's `dbus-loop` thread, which hands the reply back to a task; serving, the loop "
        + "thread hands the call to the handler's task and takes the reply back. python3-dbus's blocking call and "
        + "its GLib server each stay on one thread. Waking a sleeping thread is what those hand-offs cost, so they "
        + "show most in sequential calls on an otherwise idle machine; pipelining overlaps them.")
    lines.append("")
    lines.append("### Signals")
    lines.append("")
    lines.append("| emitter → receiver | signals/s received | vs python3-dbus |")
    lines.append("|---|---:|---:|")
    let signalBase = signals(.python, .python)
    lines.append(row(signals(.swift, .swift), base: signalBase))
    lines.append(row(signalBase, base: signalBase))
    lines.append(row(signals(.python, .swift), base: signalBase))
    lines.append(row(signals(.swift, .python), base: signalBase))
    lines.append("")
    lines.append("The emitter pauses for a `Peer.Ping` round trip to the receiver after every 256 signals, so that it "
        + "cannot outrun the receiver and overflow the bus's queue; the rate is counted at the receiver, from its "
        + "first signal to the `Stop` signal.")
    await connection.close()
    print(lines.joined(separator: "\n"))
}

func formatSeconds(_ seconds: Double) -> String {
    seconds == seconds.rounded() ? String(Int(seconds)) : String(seconds)
}

func emitProgress(_ text: String) {
    FileHandle.standardError.write(Data("DBusBench: \(text)\n".utf8))
}

// MARK: - Main

let arguments = Array(CommandLine.arguments.dropFirst())
func argument(_ index: Int) -> String {
    guard index < arguments.count else { fail("missing argument; see the comment at the top of main.swift") }
    return arguments[index]
}
func option(_ name: String) -> String? {
    guard let i = arguments.firstIndex(of: name), i + 1 < arguments.count else { return nil }
    return arguments[i + 1]
}

do {
    switch arguments.first {
    case "serve": try await serve(argument(1))
    case "call": try await callLoop(argument(1), seconds: Double(argument(2)) ?? 3, depth: Int(argument(3)) ?? 1)
    case "receive": try await receive(argument(1))
    case "emit": try await emitLoop(argument(1), seconds: Double(argument(2)) ?? 3)
    case "idle": try await idle(seconds: Double(argument(1)) ?? 10, baseline: !arguments.contains("--no-baseline"))
    case "report":
        try await report(
            peer: option("--peer") ?? "Tests/DBusTests/Peers/peer.py", python: option("--python") ?? "/usr/bin/python3",
            seconds: Double(option("--seconds") ?? "3") ?? 3, rounds: Int(option("--rounds") ?? "2") ?? 2)
    default:
        fail("usage: DBusBench report|serve|call|receive|emit|idle …; see the comment at the top of main.swift")
    }
} catch {
    fail("\(error)")
}
