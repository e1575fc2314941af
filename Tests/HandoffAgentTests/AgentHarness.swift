#if canImport(Glibc)
import Glibc
#endif
import DBus
import DBusTestSupport
import Foundation
import HandoffProtocol
import HandoffTestSupport
import Synchronization
import Testing

/// One agent test's world: a private session bus with a notification server (the
/// independent one, Peers/notification_server.py, or dunst, a real one), a fake
/// handoffd, temporary XDG directories, and the real `handoff-agent` executable
/// between them.
final class AgentHarness: Sendable {
    let bus: TestBus
    let root: String
    let daemon: FakeDaemon
    private let box: StateBox

    final class StateBox: Sendable {
        let mutex = Mutex(DaemonState())
    }

    /// Reads or changes the fake daemon's state.
    func withState<R>(_ body: (inout DaemonState) -> R) -> R {
        box.mutex.withLock { body(&$0) }
    }
    let observer: DBusConnection
    /// The real notification server, when the world has one instead of the independent server.
    let dunst: DunstSession?
    let agentLog: String
    private let agent = Mutex<TestProcess?>(nil)

    struct DaemonState: Sendable {
        var activities: [NearbyActivity] = []
        /// What `continue` of a nearby id restores.
        var continued: [String: ContinuedActivity] = [:]
        var hellos: [[String]] = []
        /// Whether each `hello` asked for `pairingEvents`.
        var pairingHellos: [Bool] = []
    }

    var dataHome: String { root + "/data/applications" }
    var dataDir: String { root + "/system/applications" }
    var runtimeDir: String { root + "/run" }

    static let serverScript: String = {
        if let url = Bundle.module.url(forResource: "Peers", withExtension: nil) {
            let path = url.appendingPathComponent("notification_server.py").path
            if FileManager.default.fileExists(atPath: path) { return path }
        }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Peers/notification_server.py").path
    }()

    /// Runs `body` in a fresh world whose notification server has `capabilities`.
    static func run(capabilities: [String] = ["actions", "body", "body-markup"], _ body: (AgentHarness) async throws -> Void)
        async throws
    {
        try await TestBus.run { bus in
            let harness = try await AgentHarness(bus: bus, capabilities: capabilities)
            defer { harness.stop() }
            try await body(harness)
        }
    }

    /// Runs `body` in a fresh world whose notification server is dunst on an Xvfb display.
    static func runWithDunst(_ body: (AgentHarness) async throws -> Void) async throws {
        try await TestBus.run { bus in
            let harness = try await AgentHarness(bus: bus, capabilities: nil)
            defer { harness.stop() }
            try await body(harness)
        }
    }

    /// A world with the independent server answering `capabilities`, or with dunst when nil.
    private init(bus: TestBus, capabilities: [String]?) async throws {
        self.bus = bus
        root = bus.bus.directory + "/world"
        for directory in ["/data/applications", "/system/applications", "/run", "/home", "/out"] {
            try FileManager.default.createDirectory(atPath: root + directory, withIntermediateDirectories: true)
        }
        chmod(root + "/run", 0o700)
        agentLog = root + "/agent.log"
        observer = try await bus.connect()
        if let capabilities {
            dunst = nil
            let server = try bus.startPython(Self.serverScript, [capabilities.isEmpty ? "-" : capabilities.joined(separator: ",")])
            try await server.waitForName("org.freedesktop.Notifications", on: observer)
        } else {
            dunst = try await DunstSession(bus: bus, directory: root + "/dunst", observer: observer)
        }

        let box = StateBox()
        self.box = box
        daemon = try FakeDaemon(
            { request, client in AgentHarness.answer(request, client, box.mutex) }, socketPath: root + "/handoffd.sock")
    }

    /// Starts handoff-agent with `environment` added to the world's.
    func startAgent(environment extra: [String: String] = [:], arguments: [String] = []) throws {
        var environment = ProcessInfo.processInfo.environment
        for key in ["XDG_DATA_HOME", "XDG_DATA_DIRS", "XDG_RUNTIME_DIR", "BROWSER", "HANDOFF_SOCKET", "XDG_CONFIG_HOME"] {
            environment.removeValue(forKey: key)
        }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.bus.address
        environment["HANDOFF_SOCKET"] = daemon.socketPath
        environment["HOME"] = root + "/home"
        environment["XDG_DATA_HOME"] = root + "/data"
        environment["XDG_DATA_DIRS"] = root + "/system"
        environment["XDG_RUNTIME_DIR"] = runtimeDir
        environment.merge(extra) { $1 }
        let fd = open(agentLog, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0o644)
        defer { close(fd) }
        let process = try TestProcess(
            try BuiltProducts.path(of: "handoff-agent"), ["--log-level", "debug"] + arguments, environment: environment,
            stdout: fd, stderr: fd)
        agent.withLock { $0 = process }
    }

    func stop() {
        agent.withLock { $0?.kill() }
        daemon.stop()
        dunst?.stop()
    }

    var log: String { (try? String(contentsOfFile: agentLog, encoding: .utf8)) ?? "" }

    // MARK: Files

    /// Writes a desktop entry.
    func writeEntry(_ text: String, named id: String, in directory: String? = nil) throws {
        try text.write(toFile: (directory ?? dataHome) + "/" + id, atomically: true, encoding: .utf8)
    }

    /// An executable script at `out/NAME` that records its arguments (NUL-separated) in
    /// `out/NAME.argv` and copies what `HANDOFF_CONTINUATION_FILE` names to `out/NAME.handed`.
    func recorder(_ name: String) throws -> String {
        let path = root + "/out/" + name
        let script = """
            #!/bin/sh
            printf '%s\\0' "$@" > '\(path).argv.tmp'
            if [ -n "$HANDOFF_CONTINUATION_FILE" ]; then
                stat -c %a "$HANDOFF_CONTINUATION_FILE" > '\(path).mode'
                cat "$HANDOFF_CONTINUATION_FILE" > '\(path).handed'
            fi
            mv '\(path).argv.tmp' '\(path).argv'
            """
        try script.write(toFile: path, atomically: true, encoding: .utf8)
        chmod(path, 0o755)
        return path
    }

    /// The arguments the recorder `name` was started with, once it was.
    func recordedArguments(_ name: String) async throws -> [String] {
        let path = root + "/out/" + name + ".argv"
        try await eventually("\(name) was started") { FileManager.default.fileExists(atPath: path) }
        let data = try Data(contentsOf: URL(fileURLWithPath: path))
        return data.split(separator: 0, omittingEmptySubsequences: false).dropLast().map { String(decoding: $0, as: UTF8.self) }
    }

    // MARK: The notification server

    struct Call: Sendable, Decodable {
        var method: String
        var id: UInt32
        var app_name: String?
        var replaces_id: UInt32?
        var app_icon: String?
        var summary: String?
        var body: String?
        var actions: [String]?
        var hints: [String: JSONValue]?
    }

    func calls() async throws -> [Call] {
        let reply = try await observer.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.handoff.Test.Notifications", member: "Calls")
        return try JSONDecoder().decode([Call].self, from: Data(try reply.decode(String.self).utf8))
    }

    func notifies() async throws -> [Call] { try await calls().filter { $0.method == "Notify" } }

    /// Clicks `action` on notification `id`.
    func invoke(_ id: UInt32, _ action: String) async throws {
        try await observer.call(
            destination: "org.freedesktop.Notifications", path: "/org/freedesktop/Notifications",
            interface: "org.handoff.Test.Notifications", member: "Invoke", [.uint32(id), .string(action)])
    }

    /// Waits (at most 15 s) until `condition` holds.
    func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(15)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw TestFailure("timed out waiting until \(what); the agent's log:\n\(log)")
    }

    /// Waits until the server has had `count` Notify calls, and returns them.
    @discardableResult
    func waitForNotifies(_ count: Int) async throws -> [Call] {
        var result: [Call] = []
        try await eventually("\(count) Notify calls") {
            result = try await notifies()
            return result.count >= count
        }
        return result
    }

    // MARK: The fake handoffd

    /// Makes `activity` nearby (`appeared`), or changes it (`updated`).
    func publishNearby(_ activity: NearbyActivity) {
        let known = withState { state in
            let known = state.activities.contains { $0.id == activity.id }
            state.activities.removeAll { $0.id == activity.id }
            state.activities.append(activity)
            return known
        }
        daemon.broadcast(try! WireFormat.event(known ? .updated : .appeared, NearbyEvent(activity: activity)))
    }

    func loseNearby(_ id: String) {
        let activity = withState { state -> NearbyActivity? in
            defer { state.activities.removeAll { $0.id == id } }
            return state.activities.first { $0.id == id }
        }
        if let activity { daemon.broadcast(try! WireFormat.event(.lost, NearbyEvent(activity: activity))) }
    }

    /// Waits until the agent has subscribed (and so will hear events).
    func waitForSubscription() async throws {
        try await eventually("the agent subscribed") { daemon.requests.contains { $0.method == .subscribe } }
    }

    private static func answer(_ request: FakeRequest, _ client: FakeClient, _ state: borrowing Mutex<DaemonState>) {
        switch request.method {
        case .hello:
            let hello = try? request.params(HelloParams.self)
            state.withLock {
                $0.hellos.append(hello?.handles ?? [])
                $0.pairingHellos.append(hello?.pairingEvents == true)
            }
            client.answer(request, HelloResult(version: 1, daemon: "handoffd test"))
        case .list:
            client.answer(request, ListResult(activities: state.withLock { $0.activities }))
        case .subscribe, .unsubscribe, .pairConfirm:
            client.answer(request, EmptyResult())
        case .continue:
            guard let params = try? request.params(ContinueParams.self),
                let activity = state.withLock({ $0.continued[params.id] })
            else { return client.fail(request, .notFound, "no such nearby activity") }
            client.answer(request, WillContinue(continuation: "c7", nearbyID: params.id, type: activity.type))
            client.event(.continued, ContinuedEvent(continuation: "c7", activity: activity))
        default:
            client.fail(request, .unknownMethod, "not in this test")
        }
    }
}

/// A nearby activity for the agent's tests.
func nearby(
    _ id: String = "a1", type: String? = "org.example.reading", title: String? = "Chapter 3", account: String = "alice",
    hasWebpageURL: Bool = false, rssi: Double = -50
) -> NearbyActivity {
    let date = Date(timeIntervalSince1970: 1_790_000_000)
    return NearbyActivity(
        id: id, account: account, device: "0a0b0c0d", type: type, typeHash: "deadbeef", title: title, hasPayload: true,
        hasWebpageURL: hasWebpageURL, supportsStreams: false, rssi: rssi, firstSeen: date, lastSeen: date)
}
