import BlueZ
import Foundation
import HandoffCore
import Logging
import Synchronization

@testable import HandoffDaemon

/// One handoffd core without Bluetooth or sockets: the real daemon, its
/// gateway and account book, over a `FakeRadio` and a `LoopbackLink`.
struct DaemonRig {
    let name: String
    let daemon: HandoffDaemon
    let gateway: ClientGateway
    let radio: FakeRadio
    let link: LoopbackLink?
    let directory: URL
    let runTask: Task<Void, Never>

    init(
        _ name: String, air: FakeAir? = nil, registry: LoopbackLink.Registry? = LoopbackLink.Registry(),
        settings: DaemonSettings = DaemonRig.settings, options: ClientGateway.Options = .init(),
        log: (any LogHandler)? = nil, storesDevices: Bool = false
    ) async throws {
        self.name = name
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-daemon-\(name)-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        var settings = settings
        if storesDevices { settings.deviceDirectory = directory.path }
        let radio = FakeRadio(name: name, air: air)
        self.radio = radio
        link = registry.map { LoopbackLink(device: radio.device, registry: $0) }
        let (book, problems) = AccountBook.load(directory: directory.path)
        precondition(problems.isEmpty, "\(problems)")
        var logger = log.map { handler in Logger(label: "handoffd-\(name)") { _ in handler } } ?? Logger(label: "handoffd-\(name)")
        logger.logLevel = log == nil ? .critical : .trace
        let daemon = HandoffDaemon(settings: settings, radio: radio, link: link, accounts: book, logger: logger)
        self.daemon = daemon
        gateway = await ClientGateway(daemon: daemon, options: options, logger: logger)
        runTask = Task { await daemon.run() }
    }

    static var settings: DaemonSettings {
        var settings = DaemonSettings()
        settings.expiry = .seconds(30)
        settings.introductionDelay = .zero
        return settings
    }

    /// A connection from a local user, with hello already said.
    func client(uid: UInt32 = 1000, app: String = "test", handles: [String] = [], pairingEvents: Bool = false)
        async throws -> TestClient
    {
        guard case .success(let connection) = await gateway.open(uid: uid, pid: 4242) else {
            throw RigError("the gateway refused a connection")
        }
        let client = TestClient(connection)
        var hello: [String: Any] = ["app": app, "versions": [1], "handles": handles]
        if pairingEvents { hello["pairingEvents"] = true }
        try await client.call("hello", hello)
        return client
    }

    func stop() async {
        runTask.cancel()
        await daemon.shutDown()
        await radio.shutDown()
        _ = await runTask.value
        try? FileManager.default.removeItem(at: directory)
    }
}

struct RigError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// A client on the gateway, speaking the JSON lines of docs/protocol.md.
final class TestClient: Sendable {
    typealias Frame = [String: any Sendable]
    let connection: ClientConnection
    private final class Received: Sendable {
        let state = Mutex<(next: Int, frames: [Frame])>((0, []))
    }
    private let received = Received()
    private let reader: Task<Void, Never>

    init(_ connection: ClientConnection) {
        self.connection = connection
        let received = self.received
        reader = Task {
            for await frame in connection.outbox.frames {
                guard let object = try? JSONSerialization.jsonObject(with: frame) as? [String: Any] else { continue }
                let sendable = object.mapValues { SendableJSON($0) as any Sendable }
                received.state.withLock { $0.frames.append(sendable) }
            }
        }
    }

    deinit { reader.cancel() }

    /// Sends a request and returns its `result`.
    /// - Throws: `ClientError` with the `error` object when the daemon answered with one.
    @discardableResult
    func call(_ method: String, _ params: [String: Any] = [:]) async throws -> [String: Any] {
        let id = received.state.withLock { state in
            state.next += 1
            return state.next
        }
        let line = try JSONSerialization.data(withJSONObject: ["id": id, "method": method, "params": params])
        await connection.receive(Array(line))
        let response = try await frame { ($0["id"] as? SendableJSON)?.value as? Int == id }
        if let error = (response["error"] as? SendableJSON)?.value as? [String: Any] {
            throw ClientError(code: error["code"] as? String ?? "?", message: error["message"] as? String ?? "")
        }
        return (response["result"] as? SendableJSON)?.value as? [String: Any] ?? [:]
    }

    /// The first event named `name` (matching `where`) not yet taken, waiting up to `within`.
    func event(_ name: String, within: Duration = .seconds(5), where match: @escaping ([String: Any]) -> Bool = { _ in true })
        async throws -> [String: Any]
    {
        let frame = try await frame(within: within) {
            guard ($0["event"] as? SendableJSON)?.value as? String == name,
                let data = ($0["data"] as? SendableJSON)?.value as? [String: Any]
            else { return false }
            return match(data)
        }
        return (frame["data"] as? SendableJSON)?.value as? [String: Any] ?? [:]
    }

    /// Names of the events received so far, in order.
    var eventNames: [String] {
        received.state.withLock { $0.frames.compactMap { ($0["event"] as? SendableJSON)?.value as? String } }
    }

    /// Takes the first frame that matches, waiting for it.
    func frame(within: Duration = .seconds(5), _ match: @escaping (Frame) -> Bool) async throws -> Frame {
        let deadline = ContinuousClock.now + within
        while ContinuousClock.now < deadline {
            let found = received.state.withLock { state -> Frame? in
                guard let index = state.frames.firstIndex(where: match) else { return nil }
                return state.frames.remove(at: index)
            }
            if let found { return found }
            try await Task.sleep(for: .milliseconds(5))
        }
        throw RigError("no matching frame within \(within); frames: \(received.state.withLock { $0.frames.map { $0.keys.sorted() } })")
    }

    func close() async {
        await connection.close()
    }
}

/// A value from JSONSerialization, carried across tasks (it is never mutated).
struct SendableJSON: @unchecked Sendable {
    let value: Any
    init(_ value: Any) { self.value = value }
}

struct ClientError: Error, Equatable {
    let code: String
    let message: String
}
