#if canImport(Glibc)
import Glibc
#endif
import DBus
import DBusTestSupport
import Foundation
import Synchronization
import Testing

/// The python peer (Peers/peer.py, a resource of this target).
enum Peers {
    static let script: String = {
        if let url = Bundle.module.url(forResource: "Peers", withExtension: nil) {
            let path = url.appendingPathComponent("peer.py").path
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Peers/peer.py").path
    }()

    static let name = "org.handoff.TestPeer"
    static let path: DBusObjectPath = "/peer"
    static let interface = "org.handoff.Test.Peer"
}

/// The interface our own test objects implement.
let localInterface = "org.handoff.Test.Local"

extension TestBus {
    /// Starts `peer.py server` and waits until it owns `Peers.name`.
    @discardableResult
    func startPythonPeer(watchingWith connection: DBusConnection, name: String = Peers.name) async throws
        -> PeerProcess
    {
        let peer = try startPython(Peers.script, ["server", name])
        try await peer.waitForName(name, on: connection)
        return peer
    }
}

extension DBusConnection {
    /// Calls the python peer at `Peers.name`.
    @discardableResult
    func callPeer(
        _ member: String, _ body: [DBusValue] = [], timeout: Duration = DBusConnection.defaultTimeout
    ) async throws -> DBusMessage {
        try await call(
            destination: Peers.name, path: Peers.path, interface: Peers.interface, member: member, body,
            timeout: timeout)
    }

    /// Asks the python peer to run the named group of checks against our object at `path`.
    func pythonChecks(_ scenario: String, against path: DBusObjectPath) async throws -> [String: String] {
        try await callPeer("Check", [.string(scenario), .string(uniqueName), .objectPath(path)])
            .decode([String: String].self)
    }

    /// The match rules the bus holds for the connection `name`
    /// (`org.freedesktop.DBus.Debug.Stats.GetAllMatchRules`).
    func busMatchRules(of name: String) async throws -> [String] {
        let reply = try await call(
            destination: DBusConnection.busName, path: DBusConnection.busPath,
            interface: "org.freedesktop.DBus.Debug.Stats", member: "GetAllMatchRules")
        return try reply.decode([String: [String]].self)[name] ?? []
    }

    /// The bus's count of match rules for the connection `name`
    /// (`org.freedesktop.DBus.Debug.Stats.GetConnectionStats`).
    func busMatchRuleCount(of name: String) async throws -> UInt32 {
        let reply = try await call(
            destination: DBusConnection.busName, path: DBusConnection.busPath,
            interface: "org.freedesktop.DBus.Debug.Stats", member: "GetConnectionStats", [.string(name)])
        return try reply.decode([String: DBusValue].self).require("MatchRules", as: UInt32.self)
    }
}

/// Records every check the python peer reports, naming the failures.
func expectAllPassed(_ results: [String: String], atLeast count: Int, sourceLocation: SourceLocation = #_sourceLocation)
{
    #expect(results.count >= count, "python ran \(results.count) checks: \(results.keys.sorted())", sourceLocation: sourceLocation)
    for (name, outcome) in results.sorted(by: { $0.key < $1.key }) {
        #expect(outcome == "ok", "python check '\(name)': \(outcome)", sourceLocation: sourceLocation)
    }
}

/// Waits (polling, up to `limit`) until `condition` holds. For states that settle
/// asynchronously, such as a thread exiting; it asserts nothing about speed.
func pollUntil(
    limit: Duration = .seconds(20), _ condition: () async throws -> Bool
) async rethrows -> Bool {
    let deadline = ContinuousClock.now + limit
    while true {
        if try await condition() { return true }
        if ContinuousClock.now >= deadline { return false }
        try? await Task.sleep(for: .milliseconds(10))
    }
}

/// A pipe whose read end holds `text` followed by end-of-file.
func pipeHolding(_ text: String) throws -> DBusUnixFD {
    var fds: [Int32] = [0, 0]
    guard pipe(&fds) == 0 else { throw TestFailure("pipe failed") }
    _ = fcntl(fds[0], F_SETFD, FD_CLOEXEC)
    _ = fcntl(fds[1], F_SETFD, FD_CLOEXEC)
    let bytes = Array(text.utf8)
    _ = bytes.withUnsafeBytes { write(fds[1], $0.baseAddress, $0.count) }
    close(fds[1])
    return DBusUnixFD(taking: fds[0])
}

/// Everything left to read from `fd` (which is not closed).
func readAll(_ fd: DBusUnixFD) -> String {
    var out = [UInt8]()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
        let n = read(fd.fileDescriptor, &buffer, buffer.count)
        if n <= 0 { break }
        out += buffer[0..<n]
    }
    return String(decoding: out, as: UTF8.self)
}

/// A thread-safe counter for handlers.
final class Counter: Sendable {
    private let storage = Mutex(0)
    func increment() { storage.withLock { $0 += 1 } }
    var value: Int { storage.withLock { $0 } }
}

/// A thread-safe box for a value a handler or validator reports.
final class Recorder<Value: Sendable>: Sendable {
    private let storage: Mutex<Value>
    init(_ value: Value) { storage = Mutex(value) }
    func set(_ value: Value) { storage.withLock { $0 = value } }
    var value: Value { storage.withLock { $0 } }
}
