import DBus
import DBusTestSupport
import Testing

/// Many tasks at once, and peers that call back into us before they answer.
@Suite(.timeLimit(.minutes(1))) struct ConcurrencyTests {
    static let echo = DBusInterface(
        localInterface,
        methods: [
            DBusMethod("Echo", inputs: "su", outputs: "su") { call in
                // Yield so that handlers really interleave.
                await Task.yield()
                return call.body
            }
        ])

    @Test func manyTasksCallConcurrently() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            try await t.startPythonPeer(watchingWith: client)
            _ = try await server.export("/echo", interfaces: [Self.echo])
            let destination = server.uniqueName
            try await withThrowingTaskGroup(of: Void.self) { group in
                for i in 0..<400 {
                    group.addTask {
                        let text = "call \(i)"
                        if i.isMultiple(of: 2) {
                            let reply = try await client.call(
                                destination: destination, path: "/echo", interface: localInterface, member: "Echo",
                                [.string(text), .uint32(UInt32(i))])
                            let (echoed, number) = try reply.decode(String.self, UInt32.self)
                            #expect(echoed == text && number == UInt32(i))
                        } else {
                            let reply = try await client.callPeer("Echo", [.string(text), .uint32(UInt32(i))])
                            let (echoed, number) = try reply.decode(String.self, UInt32.self)
                            #expect(echoed == text && number == UInt32(i))
                        }
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    @Test func manyConnectionsSubscribeAndExportConcurrently() async throws {
        try await TestBus.run { t in
            var connections: [DBusConnection] = []
            for _ in 0..<8 { connections.append(try await t.connect()) }
            let emitter = try await t.connect()
            let all = connections
            try await withThrowingTaskGroup(of: Void.self) { group in
                for (index, connection) in all.enumerated() {
                    group.addTask {
                        let stream = try await connection.signals(matching: DBusMatchRule(interface: "org.handoff.Test.Fan", member: "Go"))
                        _ = try await connection.export(
                            DBusObjectPath("/n\(index)"), interfaces: [DBusInterface(localInterface, properties: [DBusProperty("Index", Int32(index))])])
                        try await connection.requestName("org.handoff.Fan.N\(index)")
                        for try await signal in stream {
                            #expect(signal.body == [.uint32(7)])
                            break
                        }
                    }
                }
                // Everyone is subscribed once they all own their names.
                for index in all.indices {
                    let owners = try await emitter.nameOwnerChanges(of: "org.handoff.Fan.N\(index)")
                    for try await owner in owners where owner != nil { break }
                }
                try emitter.emitSignal(path: "/fan", interface: "org.handoff.Test.Fan", member: "Go", [.uint32(7)])
                try await group.waitForAll()
            }
            for index in all.indices {
                let reply = try await emitter.call(
                    destination: "org.handoff.Fan.N\(index)", path: DBusObjectPath("/n\(index)"),
                    interface: "org.freedesktop.DBus.Properties", member: "Get", [.string(localInterface), .string("Index")])
                #expect(try reply.decode(DBusValue.self) == .int32(Int32(index)))
            }
        }
    }

    /// bluetoothd's RegisterAdvertisement: the peer calls our Properties.GetAll
    /// (and our own methods) before it answers our call. Nothing may deadlock.
    @Test func aPythonPeerCallsBackBeforeReplying() async throws {
        try await TestBus.run { t in
            let connection = try await t.connect()
            try await t.startPythonPeer(watchingWith: connection)
            _ = try await connection.export(
                "/adv",
                interfaces: [
                    DBusInterface(
                        "org.bluez.LEAdvertisement1",
                        methods: [DBusMethod("Describe", outputs: "s") { _ in [.string("handler ran")] }],
                        properties: [DBusProperty("Type", "peripheral"), DBusProperty("Appearance", UInt16(0x00C0))])
                ])
            let properties = try await connection.callPeer(
                "GetAllFrom", [.string(connection.uniqueName), .objectPath("/adv"), .string("org.bluez.LEAdvertisement1")])
            #expect(try properties.decode([String: DBusValue].self) == ["Type": .string("peripheral"), "Appearance": .uint16(0x00C0)])
            let described = try await connection.callPeer(
                "CallBack", [.string(connection.uniqueName), .objectPath("/adv"), .string("org.bluez.LEAdvertisement1"), .string("Describe")])
            #expect(try described.decode(String.self) == "handler ran")
            // Many at once.
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<20 {
                    group.addTask {
                        let reply = try await connection.callPeer(
                            "GetAllFrom", [.string(connection.uniqueName), .objectPath("/adv"), .string("org.bluez.LEAdvertisement1")])
                        #expect(try reply.decode([String: DBusValue].self)["Type"] == .string("peripheral"))
                    }
                }
                try await group.waitForAll()
            }
        }
    }

    /// The same with two of our own connections: A calls B, whose handler calls
    /// back into A (Properties and a method) before replying.
    @Test func ourOwnConnectionsCallBackBeforeReplying() async throws {
        try await TestBus.run { t in
            let a = try await t.connect()
            let b = try await t.connect()
            let aName = a.uniqueName
            _ = try await a.export(
                "/a",
                interfaces: [
                    DBusInterface(
                        localInterface, methods: [DBusMethod("Name", outputs: "s") { _ in [.string("from a")] }],
                        properties: [DBusProperty("Count", UInt32(3))])
                ])
            _ = try await b.export(
                "/b",
                interfaces: [
                    DBusInterface(
                        localInterface,
                        methods: [
                            DBusMethod("Register", outputs: "us") { _ in
                                let all = try await b.call(
                                    destination: aName, path: "/a", interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                                    [.string(localInterface)])
                                let name = try await b.call(destination: aName, path: "/a", interface: localInterface, member: "Name")
                                let count = try all.decode([String: DBusValue].self).require("Count", as: UInt32.self)
                                return [.uint32(count), name.body[0]]
                            }
                        ])
                ])
            let reply = try await a.call(destination: b.uniqueName, path: "/b", interface: localInterface, member: "Register")
            let (count, name) = try reply.decode(UInt32.self, String.self)
            #expect(count == 3 && name == "from a")
        }
    }

    /// Handlers run as tasks: one that waits does not hold up the others.
    @Test func aSlowHandlerDoesNotBlockOthers() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            let (release, releaseHandler) = AsyncStream<Void>.makeStream()
            let (started, handlerStarted) = AsyncStream<Void>.makeStream()
            defer { releaseHandler.finish() }
            _ = try await server.export(
                "/mixed",
                interfaces: [
                    DBusInterface(
                        localInterface,
                        methods: Self.echo.methods + [
                            DBusMethod("Slow", outputs: "s") { _ in
                                handlerStarted.yield()
                                for await _ in release {}
                                return [.string("slow done")]
                            }
                        ])
                ])
            let slow = Task {
                try await client.call(destination: server.uniqueName, path: "/mixed", interface: localInterface, member: "Slow")
            }
            for await _ in started { break }
            for i in 0..<10 {
                let reply = try await client.call(
                    destination: server.uniqueName, path: "/mixed", interface: localInterface, member: "Echo", [.string("fast"), .uint32(UInt32(i))])
                #expect(reply.body == [.string("fast"), .uint32(UInt32(i))])
            }
            releaseHandler.finish()
            #expect(try await slow.value.decode(String.self) == "slow done")
        }
    }

    /// A connection may call its own exported objects.
    @Test func aConnectionCallsItself() async throws {
        try await TestBus.run { t in
            let connection = try await t.connect()
            _ = try await connection.export("/echo", interfaces: [Self.echo])
            let reply = try await connection.call(
                destination: connection.uniqueName, path: "/echo", interface: localInterface, member: "Echo", [.string("me"), .uint32(1)])
            #expect(reply.body == [.string("me"), .uint32(1)])
        }
    }
}
