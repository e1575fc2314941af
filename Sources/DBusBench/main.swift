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

// The roles are in Roles.swift; the report's child processes in Child.swift, its bookkeeping in Reporter.swift.

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
