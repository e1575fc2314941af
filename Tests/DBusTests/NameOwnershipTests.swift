import DBus
import DBusTestSupport
import Testing

/// RequestName, ReleaseName, GetNameOwner and NameOwnerChanged against the bus.
@Suite(.timeLimit(.minutes(1))) struct NameOwnershipTests {
    static let name = "org.handoff.Test.Owned"

    @Test func requestNameReportsEveryOutcome() async throws {
        try await TestBus.run { t in
            let first = try await t.connect()
            let second = try await t.connect()
            let watcher = try await t.connect()
            #expect(try await watcher.nameOwner(of: Self.name) == nil)

            #expect(try await first.requestName(Self.name) == .primaryOwner)
            #expect(try await first.requestName(Self.name) == .alreadyOwner)
            #expect(try await watcher.nameOwner(of: Self.name) == first.uniqueName)
            #expect(try await second.requestName(Self.name, flags: [.doNotQueue]) == .exists)
            #expect(try await second.requestName(Self.name, flags: []) == .inQueue)
            #expect(try await watcher.listNames().contains(Self.name))

            // first did not allow replacement, so replaceExisting only queues.
            #expect(try await second.requestName(Self.name, flags: [.replaceExisting]) == .inQueue)
            #expect(try await second.releaseName(Self.name) == .released)  // leaves the queue
            #expect(try await second.releaseName(Self.name) == .notOwner)
            #expect(try await second.releaseName("org.handoff.Test.Nobody") == .nonExistent)
            #expect(try await first.releaseName(Self.name) == .released)
            #expect(try await watcher.nameOwner(of: Self.name) == nil)
            #expect(try await !watcher.listNames().contains(Self.name))
        }
    }

    @Test func replacementAndQueueHandOver() async throws {
        try await TestBus.run { t in
            let first = try await t.connect()
            let second = try await t.connect()
            let third = try await t.connect()
            let watcher = try await t.connect()
            let owners = try await watcher.nameOwnerChanges(of: Self.name)
            var changes = owners.makeAsyncIterator()
            #expect(try await changes.next() == .some(nil))

            #expect(try await first.requestName(Self.name, flags: [.allowReplacement]) == .primaryOwner)
            #expect(try await changes.next() == first.uniqueName)
            #expect(try await second.requestName(Self.name, flags: [.replaceExisting]) == .primaryOwner)
            #expect(try await changes.next() == second.uniqueName)
            // first went to the queue (it did not ask for doNotQueue); third queues behind it.
            #expect(try await third.requestName(Self.name, flags: []) == .inQueue)
            #expect(try await second.releaseName(Self.name) == .released)
            #expect(try await changes.next() == first.uniqueName)
            await first.close()
            #expect(try await changes.next() == third.uniqueName)
            await third.close()
            #expect(try await changes.next() == .some(nil))
        }
    }

    @Test func aPythonPeersNameAppearsAndDisappears() async throws {
        try await TestBus.run { t in
            let watcher = try await t.connect()
            let owners = try await watcher.nameOwnerChanges(of: Peers.name)
            var changes = owners.makeAsyncIterator()
            #expect(try await changes.next() == .some(nil))
            let peer = try await t.startPythonPeer(watchingWith: watcher)
            let owner = try #require(try await changes.next() ?? nil)
            #expect(owner.hasPrefix(":"))
            #expect(try await watcher.nameOwner(of: Peers.name) == owner)
            peer.kill()
            #expect(try await changes.next() == .some(nil))
        }
    }

    @Test func invalidNamesAreRefusedLocally() async throws {
        try await TestBus.run { t in
            let connection = try await t.connect()
            for name in ["", "nodots", ":1.5", "org..x"] {
                let error = await #expect(throws: DBusError.self, "\(name)") { try await connection.requestName(name) }
                #expect(error?.is(.invalidArgs) == true)
            }
            await #expect(throws: DBusError.self) { try await connection.releaseName("bad") }
            await #expect(throws: DBusError.self) { try await connection.nameOwner(of: "bad") }
            // A unique name that is gone has no owner.
            #expect(try await connection.nameOwner(of: ":1.9999") == nil)
            #expect(try await connection.nameOwner(of: connection.uniqueName) == connection.uniqueName)
        }
    }
}
