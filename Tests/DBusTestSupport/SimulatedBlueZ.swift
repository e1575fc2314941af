import DBus
import Foundation

/// The simulated BlueZ (`handoff-sim-bluez`) running as its own process on a
/// private bus, driven through its control interface `org.handoff.Simulator1`.
public final class SimulatedBlueZ: Sendable {
    public static let controlName = "org.handoff.Simulator"
    public static let controlPath: DBusObjectPath = "/org/handoff/Simulator"
    public static let controlInterface = "org.handoff.Simulator1"

    public let bus: PrivateBus
    public let process: TestProcess
    public let control: DBusConnection

    /// Starts the simulator and waits until it owns `org.bluez` and then its
    /// control name (which it takes second), so that both can be called at once.
    public init(bus: PrivateBus, arguments: [String] = []) async throws {
        self.bus = bus
        control = try await DBusConnection.connect(to: .address(bus.address))
        let owners = try await control.nameOwnerChanges(of: "org.bluez")
        let controlOwners = try await control.nameOwnerChanges(of: Self.controlName)
        process = try TestProcess(
            try BuiltProducts.path(of: "handoff-sim-bluez"), ["--bus", bus.address] + arguments,
            environment: bus.environment)
        for try await owner in owners where owner != nil { break }
        for try await owner in controlOwners where owner != nil { break }
    }

    /// Kills the simulator (like `kill -9 bluetoothd`).
    public func kill() {
        process.kill()
    }

    /// The simulator's `ActiveInstances` for an adapter, read over D-Bus.
    public func activeInstances(_ adapter: String) async throws -> UInt8 {
        let reply = try await control.call(
            destination: "org.bluez", path: try DBusObjectPath("/org/bluez/\(adapter)"),
            interface: "org.freedesktop.DBus.Properties", member: "Get",
            [.string("org.bluez.LEAdvertisingManager1"), .string("ActiveInstances")])
        return try UInt8(dbusValue: try reply.decode(DBusValue.self))
    }

    public func callControl(_ member: String, _ body: [DBusValue] = []) async throws -> DBusMessage {
        try await control.call(
            destination: Self.controlName, path: Self.controlPath, interface: Self.controlInterface, member: member, body)
    }

    /// Drops off the bus and comes back after `downtime`, with fresh state.
    public func restart(downtime: Duration, graceful: Bool) async throws {
        let ms = UInt32(downtime.components.seconds * 1000 + downtime.components.attoseconds / 1_000_000_000_000_000)
        _ = try await callControl("Restart", [.uint32(ms), .boolean(graceful)])
    }

    public func removeAdapter(_ name: String) async throws { _ = try await callControl("RemoveAdapter", [.string(name)]) }
    public func addAdapter(_ name: String) async throws { _ = try await callControl("AddAdapter", [.string(name)]) }

    public func stop() async {
        process.kill()
        await control.close()
    }
}

/// Waits for the first element of `sequence` that satisfies `predicate`, or fails after `timeout`.
public func firstMatch<S: AsyncSequence & Sendable>(
    _ sequence: S, within timeout: Duration = .seconds(10), _ predicate: @escaping @Sendable (S.Element) -> Bool
) async throws -> S.Element where S.Element: Sendable {
    try await withThrowingTaskGroup(of: S.Element?.self) { group in
        group.addTask {
            for try await element in sequence where predicate(element) { return element }
            return nil
        }
        group.addTask {
            try await Task.sleep(for: timeout)
            return nil
        }
        defer { group.cancelAll() }
        guard let result = try await group.next(), let element = result else {
            throw TestFailure("nothing matching arrived within \(timeout)")
        }
        return element
    }
}

/// Polls `condition` (cheaply, for test use only) until it holds or `timeout` passes.
public func eventually(within timeout: Duration = .seconds(10), _ condition: @Sendable () async throws -> Bool) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return }
        try await Task.sleep(for: .milliseconds(20))
    }
    throw TestFailure("condition not met within \(timeout)")
}
