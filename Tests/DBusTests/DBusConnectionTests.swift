import DBus
import DBusTestSupport
import Testing

@Suite struct DBusConnectionTests {
    @Test func connectsAndListsNames() async throws {
        try await TestBus.run { t in
            let connection = try await t.connect()
            #expect(connection.uniqueName.hasPrefix(":"))
            let names = try await connection.listNames()
            #expect(names.contains(DBusConnection.busName))
            #expect(names.contains(connection.uniqueName))
            await connection.close()
            #expect(!connection.isConnected)
        }
    }

    @Test func callsAnExportedMethodAcrossConnections() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            _ = try await server.export(
                "/test/echo",
                interfaces: [
                    DBusInterface(
                        "org.example.Echo",
                        methods: [
                            DBusMethod("Echo", inputs: "s", outputs: "s") { call in [call.body[0]] },
                            DBusMethod("Fail") { _ in throw DBusError(name: "org.example.Error.Nope", message: "no") },
                        ],
                        properties: [DBusProperty("Count", UInt32(7))])
                ])
            let reply = try await client.call(
                destination: server.uniqueName, path: "/test/echo", interface: "org.example.Echo", member: "Echo",
                [.string("hello")])
            #expect(try reply.decode(String.self) == "hello")
            let error = await #expect(throws: DBusError.self) {
                try await client.call(
                    destination: server.uniqueName, path: "/test/echo", interface: "org.example.Echo", member: "Fail")
            }
            #expect(error?.name == "org.example.Error.Nope")
            #expect(error?.message == "no")
            let count = try await client.call(
                destination: server.uniqueName, path: "/test/echo", interface: "org.freedesktop.DBus.Properties",
                member: "Get", [.string("org.example.Echo"), .string("Count")])
            #expect(try count.decode(DBusValue.self) == .uint32(7))
            await client.close()
            await server.close()
        }
    }

    @Test func receivesSignalsAndNameOwnerChanges() async throws {
        try await TestBus.run { t in
            let watcher = try await t.connect()
            let owners = try await watcher.nameOwnerChanges(of: "org.example.Service")
            var ownerIterator = owners.makeAsyncIterator()
            #expect(try await ownerIterator.next() == .some(nil))

            let service = try await t.connect()
            let signals = try await watcher.signals(
                matching: DBusMatchRule(sender: "org.example.Service", interface: "org.example.Events"))
            #expect(try await service.requestName("org.example.Service") == .primaryOwner)
            #expect(try await ownerIterator.next() == .some(service.uniqueName))
            try service.emitSignal(path: "/e", interface: "org.example.Events", member: "Ping", [.uint32(42)])
            var signalIterator = signals.makeAsyncIterator()
            let signal = try await signalIterator.next()
            #expect(signal?.member == "Ping")
            #expect(signal?.body == [.uint32(42)])
            await service.close()
            #expect(try await ownerIterator.next() == .some(nil))
            await watcher.close()
        }
    }
}
