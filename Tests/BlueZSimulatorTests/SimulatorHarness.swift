import BlueZSimulator
import DBus
import DBusTestSupport
import Foundation
import Testing

/// A private bus with a simulator on it and a client connection, for one test.
struct SimulatorHarness {
    static let bluez = "org.bluez"
    static let adapterInterface = "org.bluez.Adapter1"
    static let advertisingInterface = "org.bluez.LEAdvertisingManager1"
    static let deviceInterface = "org.bluez.Device1"
    static let properties = "org.freedesktop.DBus.Properties"
    static let objectManager = "org.freedesktop.DBus.ObjectManager"
    static let hci0: DBusObjectPath = "/org/bluez/hci0"
    static let hci1: DBusObjectPath = "/org/bluez/hci1"

    let bus: PrivateBus
    let simulator: BlueZSimulator
    /// The test's own client.
    let client: DBusConnection

    /// Runs `body` against a fresh simulator, then stops everything, also when `body` throws.
    static func run(
        _ configure: (inout SimulatorConfiguration) -> Void = { _ in },
        _ body: (SimulatorHarness) async throws -> Void
    ) async throws {
        let bus = try PrivateBus()
        var configuration = SimulatorConfiguration()
        configuration.bus = .address(bus.address)
        configure(&configuration)
        let simulator = try BlueZSimulator(configuration: configuration)
        try await simulator.start()
        let client = try await DBusConnection.connect(to: .address(bus.address))
        let harness = SimulatorHarness(bus: bus, simulator: simulator, client: client)
        do {
            try await body(harness)
        } catch {
            await harness.tearDown()
            throw error
        }
        await harness.tearDown()
    }

    private func tearDown() async {
        await client.close()
        await simulator.stop(graceful: false)
        bus.stop()
    }

    /// Another client connection on the same bus (closed by the caller).
    func connect() async throws -> DBusConnection {
        try await DBusConnection.connect(to: .address(bus.address))
    }

    // MARK: Calls to org.bluez

    @discardableResult
    func call(
        _ path: DBusObjectPath, _ interface: String, _ member: String, _ body: [DBusValue] = [],
        from connection: DBusConnection? = nil
    ) async throws -> DBusMessage {
        try await (connection ?? client).call(
            destination: Self.bluez, path: path, interface: interface, member: member, body,
            timeout: .seconds(10))
    }

    func get(_ path: DBusObjectPath, _ interface: String, _ property: String) async throws -> DBusValue {
        try await call(path, Self.properties, "Get", [.string(interface), .string(property)]).decode(DBusValue.self)
    }

    func getAll(_ path: DBusObjectPath, _ interface: String) async throws -> [String: DBusValue] {
        let reply = try await call(path, Self.properties, "GetAll", [.string(interface)])
        return reply.body.first?.vardict ?? [:]
    }

    func set(_ path: DBusObjectPath, _ interface: String, _ property: String, _ value: DBusValue) async throws {
        try await call(path, Self.properties, "Set", [.string(interface), .string(property), .variant(value)])
    }

    /// GetManagedObjects at `/`: path → interface → properties.
    func managedObjects() async throws -> [DBusObjectPath: [String: [String: DBusValue]]] {
        let reply = try await call("/", Self.objectManager, "GetManagedObjects")
        var result: [DBusObjectPath: [String: [String: DBusValue]]] = [:]
        for (key, value) in reply.body.first?.dictionaryEntries ?? [] {
            guard case .objectPath(let path) = key else { continue }
            var interfaces: [String: [String: DBusValue]] = [:]
            for (name, properties) in value.dictionaryEntries ?? [] {
                if case .string(let interface) = name { interfaces[interface] = properties.vardict ?? [:] }
            }
            result[path] = interfaces
        }
        return result
    }

    /// The Device1 objects under `adapter`, with their properties.
    func devices(on adapter: DBusObjectPath) async throws -> [DBusObjectPath: [String: DBusValue]] {
        var result: [DBusObjectPath: [String: DBusValue]] = [:]
        for (path, interfaces) in try await managedObjects() where path.isDescendant(of: adapter) {
            if let device = interfaces[Self.deviceInterface] { result[path] = device }
        }
        return result
    }

    /// Sets `filter` (a{sv}) and starts discovery on `adapter` from `connection`.
    func scan(
        _ adapter: DBusObjectPath, filter: [String: DBusValue]? = ["Transport": "le", "DuplicateData": true],
        from connection: DBusConnection? = nil
    ) async throws {
        if let filter {
            try await call(adapter, Self.adapterInterface, "SetDiscoveryFilter", [.vardict(filter)], from: connection)
        }
        try await call(adapter, Self.adapterInterface, "StartDiscovery", from: connection)
    }

    /// Registers `advertisement` (already exported) on `adapter`, from its own connection.
    func register(_ advertisement: TestAdvertisement, on adapter: DBusObjectPath = hci0) async throws {
        try await call(
            adapter, Self.advertisingInterface, "RegisterAdvertisement",
            [.objectPath(advertisement.path), .vardict([:])], from: advertisement.connection)
    }

    func unregister(_ advertisement: TestAdvertisement, on adapter: DBusObjectPath = hci0) async throws {
        try await call(
            adapter, Self.advertisingInterface, "UnregisterAdvertisement", [.objectPath(advertisement.path)],
            from: advertisement.connection)
    }

    // MARK: The control interface

    @discardableResult
    func control(_ member: String, _ body: [DBusValue] = []) async throws -> DBusMessage {
        try await client.call(
            destination: BlueZSimulator.controlBusName, path: BlueZSimulator.controlPath,
            interface: BlueZSimulator.controlInterface, member: member, body, timeout: .seconds(10))
    }

    func stats() async throws -> [String: DBusValue] {
        try await control("GetStats").body.first?.vardict ?? [:]
    }
}

/// Polls `condition` until it holds or `timeout` passes; waits only for events, never asserts timing.
func eventually(
    _ what: String, timeout: Duration = .seconds(10), sourceLocation: SourceLocation = #_sourceLocation,
    _ condition: () async throws -> Bool
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    Issue.record("timed out waiting for \(what)", sourceLocation: sourceLocation)
    throw TestFailure("timed out waiting for \(what)")
}

/// Pauses to let things that must NOT happen have their chance.
func settle(_ duration: Duration = .milliseconds(400)) async throws {
    try await Task.sleep(for: duration)
}
