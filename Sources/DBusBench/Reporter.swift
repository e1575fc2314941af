// DBusBench report: runs the scenarios and keeps the best of each.
#if canImport(Glibc)
import Glibc
#endif
import DBus
import Foundation

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
