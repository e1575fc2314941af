import DBusTestSupport
import Foundation
import HandoffCore
import Logging
import Synchronization
import Testing

@testable import HandoffDaemon

/// Removing a device (docs/devices.md, section 7): three daemons A, B and C share account
/// "home" over the fake air and the loopback link, and have all met. A removes C; B receives the
/// new key the next time A hears it; C is locked out.
@Suite(.timeLimit(.minutes(1))) struct DaemonRemoveDeviceTests {
    static let type = "org.example.reading"

    /// Every log line of the three daemons, to look for secrets in.
    final class Lines: LogHandler, @unchecked Sendable {
        let lines = Mutex<[String]>([])
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .trace
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) { lines.withLock { $0.append("\(event.message)") } }
        var all: String { lines.withLock { $0.joined(separator: "\n") } }
    }

    struct Trio {
        let air: FakeAir
        let registry: LoopbackLink.Registry
        let log: Lines
        let a: DaemonRig, b: DaemonRig, c: DaemonRig
        let aClient: TestClient, bClient: TestClient, cClient: TestClient

        init(storesDevices: Bool = true, names: [String: String] = [:]) async throws {
            let (air, registry, log) = (FakeAir(), LoopbackLink.Registry(), Lines())
            (self.air, self.registry, self.log) = (air, registry, log)
            func rig(_ name: String) async throws -> DaemonRig {
                var settings = DaemonRig.settings
                settings.deviceName = names[name] ?? name.uppercased()
                settings.quietAfterExchange = .zero
                return try await DaemonRig(name, air: air, registry: registry, settings: settings, log: log, storesDevices: storesDevices)
            }
            a = try await rig("a")
            b = try await rig("b")
            c = try await rig("c")
            for rig in [a, b, c] {
                await rig.daemon.apply(AdvertisingPolicy(advertise: true, type: .peripheral, availability: nil))
            }
            aClient = try await a.client(app: "a-app", handles: [DaemonRemoveDeviceTests.type])
            bClient = try await b.client(app: "b-app", handles: [DaemonRemoveDeviceTests.type])
            cClient = try await c.client(app: "c-app", handles: [DaemonRemoveDeviceTests.type])
            try await aClient.call("account.create", ["name": "home"])
            let code = try #require(try await aClient.call("account.export", ["name": "home"])["code"] as? String)
            try await bClient.call("account.import", ["code": code, "name": "home"])
            try await cClient.call("account.import", ["code": code, "name": "home"])
            // A's activity: B and C introduce themselves to A; B's: C to B.
            try await aClient.call("publish", ["type": DaemonRemoveDeviceTests.type, "title": "A"])
            let (ac, bc, cc) = (aClient, bClient, cClient)
            do {
                try await eventually { try await Self.names(ac).count == 3 }
                try await bClient.call("publish", ["type": DaemonRemoveDeviceTests.type, "title": "B"])
                try await eventually { try await Self.names(bc).count == 3 }
                try await eventually { try await Self.names(cc).count == 3 }
            } catch {
                Issue.record("not all met: A \(try await Self.names(ac)), B \(try await Self.names(bc)), C \(try await Self.names(cc))\n\(log.all)")
                throw error
            }
        }

        static func names(_ client: TestClient) async throws -> [String] {
            try await DaemonDevicesTests.devices(client).compactMap { $0["name"] as? String }
        }

        func stop() async {
            await a.stop()
            await b.stop()
            await c.stop()
        }
    }

    static func activities(_ client: TestClient) async throws -> [[String: Any]] {
        try await client.call("list")["activities"] as? [[String: Any]] ?? []
    }

    static func mode(_ url: URL) throws -> Int {
        try #require(try FileManager.default.attributesOfItem(atPath: url.path)[.posixPermissions] as? Int)
    }

    @Test func aRemovedDeviceIsLockedOutAndTheOthersGoOn() async throws {
        let rig = try await Trio()
        let keyFile = rig.a.directory.appendingPathComponent("home.handoff-key")
        let rekeyFile = rig.a.directory.appendingPathComponent("home.handoff-rekey")
        let oldKey = try String(contentsOf: keyFile, encoding: .utf8)
        // C still lists A's activity, under the old key.
        let onC = try #require(try await Self.activities(rig.cClient).first { $0["deviceName"] as? String == "A" })

        let removed = try await rig.aClient.call("devices.remove", ["device": "C"])
        #expect((removed["removed"] as? [String: Any])?["name"] as? String == "C")
        #expect((removed["pending"] as? [[String: Any]])?.compactMap { $0["name"] as? String } == ["B"])
        let newFingerprint = try #require(removed["fingerprint"] as? String)
        let onA = try await DaemonDevicesTests.devices(rig.aClient)
        #expect(onA.compactMap { $0["name"] as? String } == ["A", "B"])
        #expect(onA[1]["newKeyPending"] as? Bool == true)
        #expect(try Self.mode(keyFile) == 0o600)
        #expect(try Self.mode(rekeyFile) == 0o600)
        let newKey = try String(contentsOf: keyFile, encoding: .utf8)
        #expect(newKey != oldKey)
        let rekeyText = try String(contentsOf: rekeyFile, encoding: .utf8)

        // C's request for A's activity, under the old key, is refused.
        try await rig.cClient.call("continue", ["id": try #require(onC["id"] as? String)])
        let failed = try await rig.cClient.event("continueFailed")
        #expect(failed["code"] as? String == "rejected")

        // C's beacons under the old key reach B (which has not the new key yet), not A's list.
        try await rig.cClient.call("publish", ["type": "org.example.other", "title": "C"])
        try await eventually { try await Self.activities(rig.bClient).contains { $0["deviceName"] as? String == "C" } }
        try await Task.sleep(for: .milliseconds(200))
        #expect(try await Self.activities(rig.aClient).isEmpty)

        // B publishes: A hears it under the old key and delivers the new key.
        try await rig.bClient.call("publish", ["type": "org.example.news", "title": "B again"])
        try await eventually {
            let accounts = try await rig.bClient.call("account.list")["accounts"] as? [[String: Any]] ?? []
            return accounts.first?["fingerprint"] as? String == newFingerprint
        }
        #expect(try await Trio.names(rig.bClient) == ["B", "A"])
        try await eventually { !FileManager.default.fileExists(atPath: rekeyFile.path) }
        let onAAfter = try await DaemonDevicesTests.devices(rig.aClient)
        #expect(onAAfter.allSatisfy { $0["newKeyPending"] == nil })
        #expect(try Self.mode(rig.b.directory.appendingPathComponent("home.handoff-key")) == 0o600)

        // A's new activity: B lists it, C does not.
        try await rig.aClient.call("publish", ["type": "org.example.final", "title": "A again"])
        // B declares only `type`: A's new activity is the one of A's without a type name.
        try await eventually {
            try await Self.activities(rig.bClient).contains { $0["deviceName"] as? String == "A" && $0["type"] == nil }
        }
        try await eventually { try await Self.activities(rig.aClient).contains { $0["deviceName"] as? String == "B" } }
        try await Task.sleep(for: .milliseconds(300))
        // C lists at most A's old activity, heard before the removal, until it expires.
        let fromA = try await Self.activities(rig.cClient).filter { $0["deviceName"] as? String == "A" }
        #expect(fromA.allSatisfy { $0["id"] as? String == onC["id"] as? String && $0["type"] as? String == Self.type })

        // No secret in any log line: neither key nor an envelope.
        let logs = rig.log.all
        // The key went to B in a rekey exchange, and C's request was refused by A.
        #expect(logs.contains("delivered the new key of account home to device \"B\""))
        #expect(logs.contains("account home has a new key from device"))
        #expect(logs.contains("refused: activity"))
        for text in [oldKey, newKey, rekeyText] {
            for secret in Self.longHex(in: text) { #expect(!logs.contains(secret), "a secret in the log") }
        }
        await rig.stop()
    }

    /// Without a store (rosters in memory only), the roster follows the account to its new key.
    @Test func theNewKeyReachesTheOthersWithRostersInMemory() async throws {
        let rig = try await Trio(storesDevices: false)
        let removed = try await rig.aClient.call("devices.remove", ["device": "C"])
        let newFingerprint = try #require(removed["fingerprint"] as? String)
        #expect(try await Trio.names(rig.aClient) == ["A", "B"])
        try await rig.bClient.call("publish", ["type": "org.example.news", "title": "B again"])
        try await eventually {
            let accounts = try await rig.bClient.call("account.list")["accounts"] as? [[String: Any]] ?? []
            return accounts.first?["fingerprint"] as? String == newFingerprint
        }
        #expect(try await Trio.names(rig.bClient) == ["B", "A"])
        await rig.stop()
    }

    @Test func aDeviceCannotRemoveItselfNorAnUnknownOne() async throws {
        let rig = try await Trio()
        await #expect(throws: ClientError.self) { try await rig.aClient.call("devices.remove", ["device": "A"]) }
        do {
            try await rig.aClient.call("devices.remove", ["device": "A"])
        } catch let error as ClientError {
            #expect(error.code == "invalid-params")
        }
        do {
            try await rig.aClient.call("devices.remove", ["device": "Z"])
            Issue.record("an unknown device was removed")
        } catch let error as ClientError {
            #expect(error.code == "not-found")
        }
        do {
            try await rig.aClient.call("devices.remove", ["device": "C", "account": "work"])
            Issue.record("a device was removed from an account that does not exist")
        } catch let error as ClientError {
            #expect(error.code == "not-found")
        }
        // Another user may not remove devices of an account it does not own.
        let other = try await rig.a.client(uid: 1001, app: "someone-else")
        do {
            try await other.call("devices.remove", ["device": "C"])
            Issue.record("another user removed a device")
        } catch let error as ClientError {
            #expect(error.code == "not-found")
        }
        // Nothing changed.
        #expect(!FileManager.default.fileExists(atPath: rig.a.directory.appendingPathComponent("home.handoff-rekey").path))
        #expect(Set(try await Trio.names(rig.aClient)) == ["A", "B", "C"])
        await rig.stop()
    }

    @Test func aNameTwoDevicesHaveIsRefusedWithTheirFingerprints() async throws {
        let rig = try await Trio(names: ["c": "B"])
        let onA = try await DaemonDevicesTests.devices(rig.aClient)
        let fingerprints = onA.filter { $0["name"] as? String == "B" }.compactMap { $0["fingerprint"] as? String }
        #expect(fingerprints.count == 2)
        do {
            try await rig.aClient.call("devices.remove", ["device": "B"])
            Issue.record("an ambiguous name removed a device")
        } catch let error as ClientError {
            #expect(error.code == "conflict")
            for fingerprint in fingerprints { #expect(error.message.contains(fingerprint)) }
        }
        // The fingerprint names one.
        let removed = try await rig.aClient.call("devices.remove", ["device": fingerprints[1].uppercased()])
        #expect((removed["removed"] as? [String: Any])?["fingerprint"] as? String == fingerprints[1])
        await rig.stop()
    }

    /// The hex runs of 24 digits or more in a file's text: key secrets and envelopes.
    static func longHex(in text: String) -> [String] {
        var runs: [String] = []
        var current = ""
        for character in text {
            if character.isHexDigit {
                current.append(character)
            } else {
                if current.count >= 24 { runs.append(current) }
                current = ""
            }
        }
        if current.count >= 24 { runs.append(current) }
        return runs
    }
}
