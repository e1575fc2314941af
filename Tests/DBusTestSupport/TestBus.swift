#if canImport(Glibc)
import Glibc
#endif
import DBus
import Foundation

/// One test's world: a private bus, the connections made to it and the peer
/// processes started on it, all torn down together when the test body ends
/// (connections closed, processes killed by PID, bus killed by PID), whether
/// the body returned or threw.
///
///     try await TestBus.run { t in
///         let a = try await t.connect()
///         let peer = try t.startPython(script, ["server", "org.handoff.TestPeer"])
///         try await peer.waitForName("org.handoff.TestPeer", on: a)
///     }
public final class TestBus: @unchecked Sendable {
    public let bus: PrivateBus
    private let lock = NSLock()
    private var connections: [DBusConnection] = []
    private var peers: [PeerProcess] = []
    private var counter = 0

    private init() throws {
        bus = try PrivateBus()
    }

    /// Runs `body` with a fresh bus, and tears it all down afterwards.
    public static func run<T>(_ body: (TestBus) async throws -> T) async throws -> T {
        let world = try TestBus()
        do {
            let result = try await body(world)
            await world.tearDown()
            return result
        } catch {
            await world.tearDown()
            throw error
        }
    }

    /// A new connection to this bus, closed at teardown.
    public func connect() async throws -> DBusConnection {
        let connection = try await DBusConnection.connect(to: .address(bus.address))
        lock.withLock { connections.append(connection) }
        return connection
    }

    /// Starts `/usr/bin/python3 script arguments…` on this bus (as its session and
    /// system bus), with stdout and stderr going to a log file. Killed at teardown.
    public func startPython(_ script: String, _ arguments: [String]) throws -> PeerProcess {
        try start(PeerProcess.python, [script] + arguments)
    }

    /// Starts any executable on this bus; see `startPython`.
    public func start(_ executable: String, _ arguments: [String]) throws -> PeerProcess {
        let n = lock.withLock {
            counter += 1
            return counter
        }
        let logPath = "\(bus.directory)/peer-\(n).log"
        let fd = open(logPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw TestFailure("cannot create \(logPath)") }
        defer { close(fd) }
        let process = try TestProcess(
            executable, arguments, environment: bus.environment, stdout: fd, stderr: fd)
        let peer = PeerProcess(process: process, logPath: logPath)
        lock.withLock { peers.append(peer) }
        return peer
    }

    /// Closes every connection, kills every process, then the bus.
    public func tearDown() async {
        let (connections, peers) = lock.withLock { (self.connections, self.peers) }
        for connection in connections { await connection.close() }
        for peer in peers { peer.process.kill() }
        // Logs live in the bus directory: keep them until the processes are gone.
        bus.stop()
    }
}

/// A process started by `TestBus`, with its output in a log file.
public final class PeerProcess: Sendable {
    public static let python = "/usr/bin/python3"

    public let process: TestProcess
    public let logPath: String

    /// A process started some other way, whose output goes to `logPath`.
    public init(process: TestProcess, logPath: String) {
        self.process = process
        self.logPath = logPath
    }

    /// What the process has written so far.
    public var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    /// Waits until `name` has an owner, as seen by `connection`, and returns it.
    /// Fails (instead of waiting forever) when the process exits first.
    @discardableResult
    public func waitForName(_ name: String, on connection: DBusConnection) async throws -> String {
        let owners = try await connection.nameOwnerChanges(of: name)
        let process = self.process
        let owner = try await withThrowingTaskGroup(of: String?.self) { group in
            group.addTask {
                for try await owner in owners { if let owner { return owner } }
                return nil
            }
            group.addTask {
                while process.isRunning { try await Task.sleep(for: .milliseconds(20)) }
                return nil
            }
            defer { group.cancelAll() }
            return try await group.next() ?? nil
        }
        guard let owner else {
            throw TestFailure("\(process.executable) stopped before owning \(name); its log:\n\(log)")
        }
        return owner
    }

    /// Kills the process (SIGKILL, by PID) and reaps it.
    public func kill() { process.kill() }
}

/// The threads of this process, as /proc/self/task shows them.
public enum ThreadCensus {
    /// The thread IDs whose name is `name`.
    public static func threads(named name: String) -> Set<Int32> {
        guard let tasks = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task") else { return [] }
        return Set(tasks.compactMap { task in Int32(task).flatMap { self.name(of: $0) == name ? $0 : nil } })
    }

    /// The name of thread `tid` of this process, or nil once it has exited.
    public static func name(of tid: Int32) -> String? {
        guard let comm = try? String(contentsOfFile: "/proc/self/task/\(tid)/comm", encoding: .utf8) else { return nil }
        return comm.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// The kernel's ID of the calling thread (from the /proc/thread-self link).
    public static func currentThreadID() -> Int32? {
        guard let target = try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/thread-self") else { return nil }
        return target.split(separator: "/").last.flatMap { Int32($0) }
    }
}
