#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import HandoffProtocol
import Testing

/// Bad input gets a clear error and loses nothing; the daemon keeps serving.
@Suite(.serialized) struct RobustnessTests {
    static func single(_ extra: String = "") async throws -> (PrivateBus, SimulatedBlueZ, DaemonProcess) {
        let bus = try PrivateBus()
        let sim = try await SimulatedBlueZ(bus: bus, arguments: ["--extended-advertising"])
        let daemon = try await DaemonProcess(bus: bus, name: "a", adapter: "hci0", extraSocketSettings: extra)
        return (bus, sim, daemon)
    }

    func errorCode(_ client: WireClient) async throws -> ErrorCode {
        guard case .error(_, let error) = try WireFormat.incoming(try await client.readLine()) else {
            throw TestFailure("expected an error response")
        }
        return error.code
    }

    @Test func everyKindOfBadInputGetsItsErrorAndTheConnectionKeepsWorking() async throws {
        let (bus, sim, daemon) = try await Self.single("max_activities_per_client = 2")
        let client = try WireClient(socket: daemon.socket)

        try client.sendRaw(Array("{\"id\":1,\"method\":\"list\"}\n".utf8))
        #expect(try await errorCode(client) == .helloRequired)
        try await client.hello()
        _ = try await client.call(.accountCreate, AccountNameParams(name: "me"), as: AccountInfo.self)

        try client.sendRaw(Array(repeating: UInt8(ascii: "x"), count: 20_000) + [UInt8(ascii: "\n")])
        #expect(try await errorCode(client) == .lineTooLong)
        try client.sendRaw(Array("this is not json\n".utf8))
        #expect(try await errorCode(client) == .invalidJSON)
        try client.sendRaw(Array("{\"id\":2,\"method\":\"self-destruct\"}\n".utf8))
        #expect(try await errorCode(client) == .unknownMethod)
        try client.sendRaw(Array("{\"id\":3,\"method\":\"publish\",\"params\":{\"type\":42}}\n".utf8))
        #expect(try await errorCode(client) == .invalidParams)
        try client.sendRaw([0xff, 0xfe, 0x00, 0x80, UInt8(ascii: "\n")])
        #expect(try await errorCode(client) == .invalidJSON)

        let bigInfo: [String: JSONValue] = ["blob": .string(String(repeating: "a", count: 3100))]
        #expect(try await client.failure(.publish, PublishParams(type: "org.a.b", userInfo: bigInfo)).code == .payloadTooLarge)
        #expect(try await client.failure(.publish, PublishParams(type: "not a type")).code == .invalidParams)
        #expect(try await client.failure(.publish, PublishParams(type: "org.a.b", webpageURL: "file:///etc/passwd")).code == .invalidParams)
        #expect(try await client.failure(.invalidate, ActivityIDParams(id: "nope")).code == .notFound)
        #expect(try await client.failure(.hello, HelloParams(app: "x", versions: [99])).code == .unsupportedVersion)

        _ = try await client.call(.publish, PublishParams(type: "org.a.b"), as: PublishResult.self)
        _ = try await client.call(.publish, PublishParams(type: "org.a.c"), as: PublishResult.self)
        #expect(try await client.failure(.publish, PublishParams(type: "org.a.d")).code == .tooManyActivities)

        // After all that, the same connection still works, and so does a new one.
        #expect(try await client.call(.status, EmptyResult(), as: StatusResult.self).localActivityCount == 2)
        #expect(try await daemon.client().call(.status, EmptyResult(), as: StatusResult.self).accounts == ["me"])
        #expect(daemon.process.isRunning)
        _ = await daemon.terminate()
        await sim.stop()
        bus.stop()
    }

    @Test func tooManyClientsAreToldSoAndOthersAreServed() async throws {
        let (bus, sim, daemon) = try await Self.single("max_clients = 2")
        let first = try await daemon.client()
        let second = try await daemon.client()
        let third = try WireClient(socket: daemon.socket)
        #expect(try await errorCode(third) == .tooManyClients)
        #expect(try await first.call(.status, EmptyResult(), as: StatusResult.self).clientCount == 2)
        second.close()
        try await eventually {
            guard let fourth = try? await daemon.client() else { return false }
            return (try? await fourth.call(.status, EmptyResult(), as: StatusResult.self)) != nil
        }
        _ = await daemon.terminate()
        await sim.stop()
        bus.stop()
    }

    /// A client that sends thousands of requests without reading stalls only itself:
    /// the daemon stops reading its requests (bounded buffering, docs/protocol.md,
    /// Ordering), serves everyone else, and once the client reads it gets every
    /// answer, in order.
    @Test func aClientThatStopsReadingStallsOnlyItselfAndLosesNothing() async throws {
        let (bus, sim, daemon) = try await Self.single()
        let slow = try WireClient(socket: daemon.socket)
        let request = Array(try WireFormat.request(id: 1, method: .hello, params: HelloParams(app: "slow")))
        let total = 12_000
        // Blocking writes on a thread of their own: once the daemon stops reading, they wait.
        let written = Counter()
        let writer = Thread {
            for _ in 0..<total {
                guard (try? slow.sendRaw(request)) != nil else { return }
                written.add()
            }
        }
        writer.start()
        // The writes stall well before the end: the daemon does not buffer without bound.
        var last = -1
        while written.value != last && written.value < total {
            last = written.value
            try await Task.sleep(for: .milliseconds(500))
        }
        let stalledAt = written.value
        #expect(stalledAt < total, "the daemon took all \(total) requests without their answers being read")
        let other = try await daemon.client()
        #expect(try await other.call(.status, EmptyResult(), as: StatusResult.self).daemon.hasPrefix("handoffd"))
        // Now the slow client reads: every request gets its answer, and the writer finishes.
        for n in 0..<total {
            guard case .result(let id, _) = try WireFormat.incoming(try await slow.readLine()) else {
                Issue.record("answer \(n) is not a result")
                break
            }
            #expect(id == 1)
        }
        #expect(written.value == total)
        #expect(daemon.process.isRunning)
        _ = await daemon.terminate()
        await sim.stop()
        bus.stop()
    }

    /// A count shared with a thread.
    final class Counter: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        var value: Int { lock.withLock { count } }
        func add() { lock.withLock { count += 1 } }
    }

    @Test func usersSeeOnlyTheirOwnAccounts() async throws {
        let (bus, sim, daemon) = try await Self.single()
        let root = try await daemon.client()
        _ = try await root.call(.accountCreate, AccountNameParams(name: "roots"), as: AccountInfo.self)
        // A client running as nobody (uid 65534), through setpriv.
        let output = "\(daemon.directory)/nobody.out"
        let script = """
            import socket, json, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); f = s.makefile('rwb')
            def call(i, m, p):
                f.write((json.dumps({'id': i, 'method': m, 'params': p}) + '\\n').encode()); f.flush()
                return json.loads(f.readline())
            out = [call(1, 'hello', {'app': 'nobody', 'versions': [1]}), call(2, 'account.list', {}),
                   call(3, 'account.export', {'name': 'roots'}), call(4, 'publish', {'type': 'org.a.b'}),
                   call(5, 'status', {})]
            print(json.dumps(out))
            """
        // nobody must be able to reach the socket (mode 0666) through the test's directories.
        chmod(bus.directory, 0o711)
        chmod(daemon.directory, 0o711)
        let outputFD = open(output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { close(outputFD) }
        let child = try TestProcess(
            "/usr/bin/setpriv",
            ["--reuid=65534", "--regid=65534", "--clear-groups", "/usr/bin/python3", "-c", script, daemon.socket],
            stdout: outputFD)
        #expect(await child.exitCode(within: .seconds(20)) == 0)
        let replies = try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: output))) as! [[String: Any]]
        #expect(((replies[1]["result"] as? [String: Any])?["accounts"] as? [Any])?.isEmpty == true)
        #expect((replies[2]["error"] as? [String: Any])?["code"] as? String == "not-found")
        #expect((replies[3]["error"] as? [String: Any])?["code"] as? String == "no-account")
        #expect(((replies[4]["result"] as? [String: Any])?["accounts"] as? [Any])?.isEmpty == true)
        #expect(try await root.call(.accountList, EmptyResult(), as: AccountListResult.self).accounts.map(\.name) == ["roots"])
        _ = await daemon.terminate()
        await sim.stop()
        bus.stop()
    }

    @Test func sighupWithABadConfigKeepsTheOldOne() async throws {
        let (bus, sim, daemon) = try await Self.single()
        let client = try await daemon.client()
        _ = try await client.call(.accountCreate, AccountNameParams(name: "me"), as: AccountInfo.self)
        let good = try String(contentsOfFile: daemon.configPath, encoding: .utf8)
        try (good + "\n[nonsense]\nkey = 1\n").write(toFile: daemon.configPath, atomically: true, encoding: .utf8)
        daemon.process.signal(SIGHUP)
        try await eventually { daemon.log.contains("reload failed, keeping the old configuration") }
        #expect(daemon.log.contains("nonsense"))
        #expect(try await client.call(.status, EmptyResult(), as: StatusResult.self).accounts == ["me"])
        #expect(try await daemon.client().call(.accountList, EmptyResult(), as: AccountListResult.self).accounts.count == 1)
        #expect(daemon.process.isRunning)
        _ = await daemon.terminate()
        await sim.stop()
        bus.stop()
    }

    @Test func sigtermUnregistersRemovesTheSocketAndExitsZero() async throws {
        let (bus, sim, daemon) = try await Self.single()
        let client = try await daemon.client()
        _ = try await client.call(.accountCreate, AccountNameParams(name: "me"), as: AccountInfo.self)
        _ = try await client.call(.publish, PublishParams(type: "org.a.b"), as: PublishResult.self)
        try await eventually { try await sim.activeInstances("hci0") == 1 }
        #expect(await daemon.terminate() == 0)
        #expect(try await sim.activeInstances("hci0") == 0)
        #expect(!FileManager.default.fileExists(atPath: daemon.socket))
        await sim.stop()
        bus.stop()
    }
}
