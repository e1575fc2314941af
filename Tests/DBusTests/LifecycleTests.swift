import DBus
import DBusTestSupport
import Testing

/// Each connection runs one thread named `dbus-loop`; closing (or dropping) the
/// connection must end it.
///
/// Other tests, in this target and others, open connections in parallel, so
/// counting every `dbus-loop` thread would be racy. These tests find their own
/// connection's thread instead: a property validator runs on the connection's
/// loop thread, so a `Set` from another connection makes it report its thread ID.
@Suite(.timeLimit(.minutes(1))) struct LifecycleTests {
    static let threadName = "dbus-loop"

    /// Exports an object on `connection` whose validator records the thread it runs on,
    /// and has `other` call Set so that it runs.
    static func loopThread(of connection: DBusConnection, using other: DBusConnection) async throws -> Int32 {
        let recorded = Recorder<Int32?>(nil)
        _ = try await connection.export(
            "/thread",
            interfaces: [
                DBusInterface(
                    localInterface,
                    properties: [
                        DBusProperty(
                            "Probe", type: .int32, value: .int32(0), access: .readwrite,
                            validate: { _ in recorded.set(ThreadCensus.currentThreadID()) })
                    ])
            ])
        try await other.call(
            destination: connection.uniqueName, path: "/thread", interface: "org.freedesktop.DBus.Properties", member: "Set",
            [.string(localInterface), .string("Probe"), .variant(.int32(1))])
        return try #require(recorded.value)
    }

    @Test func closeLeavesNoThreadBehind() async throws {
        try await TestBus.run { t in
            let connection = try await t.connect()
            let helper = try await t.connect()
            let tid = try await Self.loopThread(of: connection, using: helper)
            #expect(ThreadCensus.name(of: tid) == Self.threadName)
            #expect(ThreadCensus.threads(named: Self.threadName).contains(tid))
            // Give the thread more work first: a subscription, a call.
            let stream = try await connection.signals(matching: DBusMatchRule(member: "X"))
            _ = try await connection.listNames()
            await connection.close()
            #expect(!connection.isConnected)
            // close() returns once the thread has left its loop; the kernel drops it
            // from /proc a moment later.
            let gone = await pollUntil { !ThreadCensus.threads(named: Self.threadName).contains(tid) }
            #expect(gone, "thread \(tid) is still \(ThreadCensus.name(of: tid) ?? "gone")")
            _ = stream
        }
    }

    /// Makes a connection that owns a name and has a subscription and an object,
    /// then drops it without closing it. Returns its thread.
    static func connectAndDrop(_ t: TestBus, helper: DBusConnection) async throws -> Int32 {
        let connection = try await DBusConnection.connect(to: .address(t.bus.address))
        let tid = try await loopThread(of: connection, using: helper)
        let stream = try await connection.signals(matching: DBusMatchRule(member: "X"))
        try await connection.requestName("org.handoff.Dropped")
        _ = stream
        return tid
    }

    @Test func droppingAConnectionWithoutClosingStopsItsThread() async throws {
        try await TestBus.run { t in
            let watcher = try await t.connect()
            let owners = try await watcher.nameOwnerChanges(of: "org.handoff.Dropped")
            var changes = owners.makeAsyncIterator()
            #expect(try await changes.next() == .some(nil))
            let tid = try await Self.connectAndDrop(t, helper: watcher)
            #expect(try await changes.next() != nil)
            // The bus sees the connection go...
            #expect(try await changes.next() == .some(nil))
            // ...and its thread ends.
            let gone = await pollUntil { ThreadCensus.name(of: tid) != Self.threadName }
            #expect(gone)
        }
    }

    static func connectBareAndDrop(_ t: TestBus, helper: DBusConnection) async throws -> Int32 {
        let connection = try await DBusConnection.connect(to: .address(t.bus.address))
        return try await loopThread(of: connection, using: helper)
    }

    /// The same with nothing but an exported object: no subscription keeps any
    /// of the connection's internals alive after the last reference goes.
    @Test func droppingABareConnectionStopsItsThread() async throws {
        try await TestBus.run { t in
            let helper = try await t.connect()
            let tid = try await Self.connectBareAndDrop(t, helper: helper)
            let gone = await pollUntil { ThreadCensus.name(of: tid) != Self.threadName }
            #expect(gone)
            // The process is still healthy: its other connection works.
            #expect(try await helper.listNames().contains(helper.uniqueName))
        }
    }

    @Test func closingTwiceAndUsingAClosedConnection() async throws {
        try await TestBus.run { t in
            let connection = try await t.connect()
            let server = try await t.connect()
            let (started, handlerStarted) = AsyncStream<Void>.makeStream()
            let (release, releaseHandler) = AsyncStream<Void>.makeStream()
            defer { releaseHandler.finish() }
            _ = try await server.export(
                "/slow",
                interfaces: [
                    DBusInterface(
                        localInterface,
                        methods: [
                            DBusMethod("Wait") { _ in
                                handlerStarted.yield()
                                for await _ in release {}
                                return []
                            }
                        ])
                ])
            let pending = Task {
                try await connection.call(destination: server.uniqueName, path: "/slow", interface: localInterface, member: "Wait")
            }
            // The call is pending once the server's handler runs.
            for await _ in started { break }
            await connection.close()
            let error = await #expect(throws: DBusError.self) { try await pending.value }
            #expect(error?.is(.disconnected) == true, "\(String(describing: error))")
            await connection.close()
            await connection.waitUntilClosed()
            #expect(!connection.isConnected)
            let after = await #expect(throws: DBusError.self) { try await connection.listNames() }
            #expect(after?.is(.disconnected) == true)
            #expect(throws: DBusError.self) { try connection.emitSignal(path: "/", interface: "a.b", member: "S") }
            // The server is unaffected.
            #expect(try await server.listNames().contains(server.uniqueName))
        }
    }
}
