import DBus
import DBusTestSupport
import Testing

/// `org.freedesktop.DBus.Properties` served for our exported objects.
@Suite(.timeLimit(.minutes(1))) struct PropertiesTests {
    struct Veto: Error {}

    /// Name (s, read), Level (i, readwrite, must not be negative), Secret (s, write),
    /// Mode (s, readwrite, emits invalidation only), Serial (u, const), Hidden (u, emits nothing).
    static let interface = DBusInterface(
        localInterface,
        methods: [DBusMethod("Noop") { _ in [] }],
        properties: [
            DBusProperty("Name", "local"),
            DBusProperty(
                "Level", type: .int32, value: .int32(5), access: .readwrite,
                validate: { value in if case .int32(let v) = value, v < 0 { throw Veto() } }),
            DBusProperty("Secret", type: .string, value: .string("hidden"), access: .write),
            DBusProperty("Mode", type: .string, value: .string("a"), access: .readwrite, changeSignal: .invalidates),
            DBusProperty("Serial", UInt32(9), changeSignal: .const),
            DBusProperty("Hidden", UInt32(0), changeSignal: .false),
        ])

    static func properties(_ connection: DBusConnection, _ destination: String, _ member: String, _ body: [DBusValue])
        async throws -> DBusMessage
    {
        try await connection.call(
            destination: destination, path: "/props", interface: "org.freedesktop.DBus.Properties", member: member, body)
    }

    static func expectError(_ name: DBusError.Name, sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws -> Void) async {
        let error = await #expect(throws: DBusError.self, sourceLocation: sourceLocation) { try await body() }
        #expect(error?.name == name.rawValue, "\(String(describing: error))", sourceLocation: sourceLocation)
    }

    @Test func getGetAllAndSetFromAnotherConnection() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            let object = try await server.export("/props", interfaces: [Self.interface])
            let name = server.uniqueName

            #expect(try await Self.properties(client, name, "Get", [.string(localInterface), .string("Name")]).decode(DBusValue.self) == .string("local"))
            let all = try await Self.properties(client, name, "GetAll", [.string(localInterface)]).decode([String: DBusValue].self)
            // Write-only properties are left out.
            #expect(all == ["Name": .string("local"), "Level": .int32(5), "Mode": .string("a"), "Serial": .uint32(9), "Hidden": .uint32(0)])

            try await Self.properties(client, name, "Set", [.string(localInterface), .string("Level"), .variant(.int32(7))])
            #expect(try await object.property("Level", of: localInterface) == .int32(7))
            #expect(try await Self.properties(client, name, "Get", [.string(localInterface), .string("Level")]).decode(DBusValue.self) == .int32(7))
            try await Self.properties(client, name, "Set", [.string(localInterface), .string("Secret"), .variant(.string("new"))])
            #expect(try await object.property("Secret", of: localInterface) == .string("new"))
        }
    }

    @Test func refusesBadRequestsWithTheRightErrors() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            let object = try await server.export("/props", interfaces: [Self.interface])
            let name = server.uniqueName
            let set = { (property: String, value: DBusValue) in
                try await Self.properties(client, name, "Set", [.string(localInterface), .string(property), .variant(value)])
            }
            await Self.expectError(.propertyReadOnly) { _ = try await set("Name", .string("x")) }
            await Self.expectError(.propertyReadOnly) { _ = try await set("Serial", .uint32(1)) }
            await Self.expectError(.unknownProperty) { _ = try await set("Nope", .int32(1)) }
            await Self.expectError(.invalidArgs) { _ = try await set("Level", .string("seven")) }
            await Self.expectError(.invalidArgs) { _ = try await set("Level", .int64(7)) }
            // The validator's veto (a non-D-Bus error) comes back as InvalidArgs.
            await Self.expectError(.invalidArgs) { _ = try await set("Level", .int32(-1)) }
            #expect(try await object.property("Level", of: localInterface) == .int32(5))

            await Self.expectError(.accessDenied) {
                _ = try await Self.properties(client, name, "Get", [.string(localInterface), .string("Secret")])
            }
            await Self.expectError(.unknownProperty) {
                _ = try await Self.properties(client, name, "Get", [.string(localInterface), .string("Nope")])
            }
            await Self.expectError(.unknownInterface) {
                _ = try await Self.properties(client, name, "Get", [.string("org.handoff.Nope"), .string("Name")])
            }
            await Self.expectError(.unknownInterface) {
                _ = try await Self.properties(client, name, "GetAll", [.string("org.handoff.Nope")])
            }
            await Self.expectError(.invalidArgs) { _ = try await Self.properties(client, name, "Get", [.string(localInterface)]) }
            await Self.expectError(.invalidArgs) { _ = try await Self.properties(client, name, "GetAll", []) }
            await Self.expectError(.invalidArgs) { _ = try await Self.properties(client, name, "GetAll", [.int32(1)]) }
            await Self.expectError(.invalidArgs) {
                _ = try await Self.properties(client, name, "Set", [.string(localInterface), .string("Level"), .int32(1)])
            }
            await Self.expectError(.unknownMethod) { _ = try await Self.properties(client, name, "Frob", []) }
            await Self.expectError(.unknownObject) {
                _ = try await client.call(
                    destination: name, path: "/elsewhere", interface: "org.freedesktop.DBus.Properties", member: "GetAll",
                    [.string(localInterface)])
            }
        }
    }

    @Test func ownerSideChangesAndTheirErrors() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let object = try await server.export("/props", interfaces: [Self.interface])
            try await object.setProperty("Name", of: localInterface, to: .string("renamed"))
            #expect(try await object.property("Name", of: localInterface) == .string("renamed"))
            #expect(try await object.property("Nope", of: localInterface) == nil)
            let unknown = await #expect(throws: DBusError.self) {
                try await object.setProperty("Nope", of: localInterface, to: .int32(1))
            }
            #expect(unknown?.is(.unknownProperty) == true)
            let wrongType = await #expect(throws: DBusError.self) {
                try await object.setProperty("Name", of: localInterface, to: .int32(1))
            }
            #expect(wrongType?.is(.invalidArgs) == true)
            let noInterface = await #expect(throws: DBusError.self) {
                try await object.setProperty("Name", of: "org.handoff.Nope", to: .string("x"))
            }
            #expect(noInterface?.is(.unknownInterface) == true)
            // A failed batch changes nothing.
            await #expect(throws: DBusError.self) {
                try await object.setProperties(of: localInterface, ["Name": .string("batch"), "Nope": .int32(1)])
            }
            #expect(try await object.property("Name", of: localInterface) == .string("renamed"))
            await object.unexport()
            let gone = await #expect(throws: DBusError.self) {
                try await object.setProperty("Name", of: localInterface, to: .string("x"))
            }
            #expect(gone?.is(.unknownObject) == true)
        }
    }

    @Test func exportRefusesBadDescriptions() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let bad: [DBusInterface] = [
                DBusInterface("nodots"),
                DBusInterface(localInterface, methods: [DBusMethod("bad-name") { _ in [] }]),
                DBusInterface(localInterface, properties: [DBusProperty("bad.name", "x")]),
                DBusInterface(localInterface, properties: [DBusProperty("P", type: .string, value: .int32(1))]),
                DBusInterface(localInterface, properties: [DBusProperty("P", type: .string, value: .string("\0"))]),
            ]
            for interface in bad {
                let error = await #expect(throws: DBusError.self, "\(interface.name)") {
                    _ = try await server.export("/bad", interfaces: [interface])
                }
                #expect(error?.is(.invalidArgs) == true)
            }
            let twice = await #expect(throws: DBusError.self) {
                _ = try await server.export("/bad", interfaces: [DBusInterface(localInterface), DBusInterface(localInterface)])
            }
            #expect(twice?.is(.invalidArgs) == true)
            _ = try await server.export("/good", interfaces: [DBusInterface(localInterface)])
            let taken = await #expect(throws: DBusError.self) {
                _ = try await server.export("/good", interfaces: [DBusInterface(localInterface)])
            }
            #expect(taken?.is(.failed) == true)
        }
    }

    /// PropertiesChanged follows each property's EmitsChangedSignal setting, for
    /// changes made by the owner and by a peer's Set.
    @Test func propertiesChangedSignals() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let watcher = try await t.connect()
            let object = try await server.export("/props", interfaces: [Self.interface])
            let signals = try await watcher.signals(
                matching: DBusMatchRule(
                    sender: server.uniqueName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    path: "/props"))
            var received = signals.makeAsyncIterator()

            try await object.setProperty("Name", of: localInterface, to: .string("renamed"))
            let first = try #require(try await received.next())
            #expect(first.signature == "sa{sv}as")
            #expect(first.body == [.string(localInterface), .vardict(["Name": .string("renamed")]), .strings([])])

            // No change, no signal; const and false properties emit nothing; an
            // "invalidates" property is named without its value. The next signal
            // seen must therefore be the one for Mode.
            try await object.setProperty("Name", of: localInterface, to: .string("renamed"))
            try await object.setProperty("Hidden", of: localInterface, to: .uint32(1))
            try await object.setProperty("Serial", of: localInterface, to: .uint32(10))
            try await object.setProperty("Mode", of: localInterface, to: .string("b"))
            let second = try #require(try await received.next())
            #expect(second.body == [.string(localInterface), .vardict([:]), .strings(["Mode"])])

            // Several at once: one signal.
            try await object.setProperties(of: localInterface, ["Name": .string("n2"), "Level": .int32(8), "Mode": .string("c")])
            let third = try #require(try await received.next())
            #expect(third.body == [.string(localInterface), .vardict(["Name": .string("n2"), "Level": .int32(8)]), .strings(["Mode"])])

            // A peer's Set emits too.
            try await watcher.call(
                destination: server.uniqueName, path: "/props", interface: "org.freedesktop.DBus.Properties", member: "Set",
                [.string(localInterface), .string("Level"), .variant(.int32(9))])
            let fourth = try #require(try await received.next())
            #expect(fourth.body == [.string(localInterface), .vardict(["Level": .int32(9)]), .strings([])])
        }
    }

    /// `announce: false` changes the values peers read and emits nothing: the next
    /// signal seen is the one for the change made after it.
    @Test func silentChangesAreReadButNotAnnounced() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let watcher = try await t.connect()
            let object = try await server.export("/props", interfaces: [Self.interface])
            let signals = try await watcher.signals(
                matching: DBusMatchRule(
                    sender: server.uniqueName, interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
                    path: "/props"))
            var received = signals.makeAsyncIterator()

            try await object.setProperties(of: localInterface, ["Name": .string("quiet")], announce: false)
            let read = try await watcher.call(
                destination: server.uniqueName, path: "/props", interface: "org.freedesktop.DBus.Properties", member: "Get",
                [.string(localInterface), .string("Name")])
            #expect(read.body == [.variant(.string("quiet"))])
            try await object.setProperty("Level", of: localInterface, to: .int32(77))
            let next = try #require(try await received.next())
            #expect(next.body == [.string(localInterface), .vardict(["Level": .int32(77)]), .strings([])])
        }
    }

    /// python3-dbus reads and writes our properties, and sees PropertiesChanged for its Set.
    @Test func pythonUsesOurProperties() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            try await t.startPythonPeer(watchingWith: server)
            let interface = DBusInterface(
                localInterface,
                properties: [
                    DBusProperty("Name", "local"),
                    DBusProperty(
                        "Level", type: .int32, value: .int32(5), access: .readwrite,
                        validate: { value in
                            if case .int32(let v) = value, v < 0 { throw DBusError(.invalidArgs, "Level must not be negative") }
                        }),
                    DBusProperty("Secret", type: .string, value: .string("hidden"), access: .write),
                ])
            let object = try await server.export("/local", interfaces: [interface])
            try await server.callPeer(
                "Watch", [.string("type='signal',interface='org.freedesktop.DBus.Properties',path='/local'")])
            let results = try await server.pythonChecks("properties", against: "/local")
            expectAllPassed(results, atLeast: 10)
            #expect(try await object.property("Level", of: localInterface) == .int32(6))

            // An owner-side change reaches python as well.
            try await object.setProperty("Name", of: localInterface, to: .string("changed"))
            let seen = try await server.callPeer("Received").decode([String].self)
                .filter { $0.hasPrefix("org.freedesktop.DBus.Properties.PropertiesChanged ") }
            #expect(seen == [
                "org.freedesktop.DBus.Properties.PropertiesChanged "
                    + describe([.string(localInterface), .vardict(["Level": .int32(6)]), .strings([])]),
                "org.freedesktop.DBus.Properties.PropertiesChanged "
                    + describe([.string(localInterface), .vardict(["Name": .string("changed")]), .strings([])]),
            ])
        }
    }
}
