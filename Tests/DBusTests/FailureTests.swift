#if canImport(Glibc)
import Glibc
#endif
import DBus
import DBusTestSupport
import Testing

/// What goes wrong: timeouts, peer errors, peers and buses that vanish,
/// malformed replies and arguments, cancellation.
@Suite(.timeLimit(.minutes(1))) struct FailureTests {
    /// Waits until the python peer has received a NeverReply call tagged `tag`.
    static func callReceived(_ connection: DBusConnection) async throws -> AsyncThrowingStream<DBusMessage, Error> {
        try await connection.signals(matching: DBusMatchRule(sender: Peers.name, interface: Peers.interface, member: "CallReceived"))
    }

    @Test func aPeerThatNeverRepliesTimesOutWithNoReply() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            try await t.startPythonPeer(watchingWith: client)
            let clock = ContinuousClock()
            let start = clock.now
            let error = await #expect(throws: DBusError.self) {
                try await client.callPeer("NeverReply", [.string("timeout")], timeout: .milliseconds(300))
            }
            let elapsed = clock.now - start
            #expect(error?.is(.noReply) == true, "\(String(describing: error))")
            // The given timeout applied, not libdbus's default of 25 s. (A bound on
            // correctness, not on speed: nothing else could end the call in between.)
            #expect(elapsed >= .milliseconds(300))
            #expect(elapsed < DBusConnection.defaultTimeout)
            // The connection carries on.
            #expect(try await client.callPeer("Version").decode(Int32.self) == 3)
        }
    }

    /// Any timeout is accepted: zero and negative ones mean "at once", huge ones
    /// "as long as it takes" (libdbus's longest), and none of them traps.
    @Test func extremeTimeoutsAreClamped() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            func getID(_ timeout: Duration) async throws -> String {
                try await client.call(
                    destination: DBusConnection.busName, path: DBusConnection.busPath, interface: DBusConnection.busInterface,
                    member: "GetId", timeout: timeout
                ).decode(String.self)
            }
            for timeout: Duration in [.seconds(Int64.max), .milliseconds(Int64.max), .seconds(1_000_000_000)] {
                #expect(try await getID(timeout).count == 32)
            }
            // The shortest timeout (1 ms) may or may not beat the bus's answer; either
            // way the call ends with the answer or NoReply.
            for timeout: Duration in [.seconds(Int64.min), .zero, .nanoseconds(-1)] {
                do {
                    #expect(try await getID(timeout).count == 32)
                } catch let error as DBusError {
                    #expect(error.is(.noReply), "\(error)")
                }
            }
        }
    }

    @Test func errorsFromPythonKeepTheirNameAndMessage() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            try await t.startPythonPeer(watchingWith: client)
            let error = await #expect(throws: DBusError.self) {
                try await client.callPeer("Fail", [.string("org.bluez.Error.NotPermitted"), .string("Maximum advertisements reached")])
            }
            #expect(error == DBusError(name: "org.bluez.Error.NotPermitted", message: "Maximum advertisements reached"))
            // python3-dbus does not check arguments against in_signature: the handler
            // raises a Python TypeError, which dbus-python names for us.
            let wrong = await #expect(throws: DBusError.self) { try await client.callPeer("Fail", [.int32(1)]) }
            #expect(wrong?.name == "org.freedesktop.DBus.Python.TypeError", "\(String(describing: wrong))")
            let unknown = await #expect(throws: DBusError.self) { try await client.callPeer("NoSuchMethod") }
            #expect(unknown?.is(.unknownMethod) == true, "\(String(describing: unknown))")
            let nobody = await #expect(throws: DBusError.self) {
                try await client.call(destination: "org.handoff.Nobody", path: "/", interface: "a.b", member: "M")
            }
            #expect(nobody?.is(.serviceUnknown) == true, "\(String(describing: nobody))")
        }
    }

    @Test func aPeerThatDiesMidCallFailsTheCall() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            let peer = try await t.startPythonPeer(watchingWith: client)
            let received = try await Self.callReceived(client)
            var iterator = received.makeAsyncIterator()
            let call = Task { try await client.callPeer("NeverReply", [.string("die")]) }
            #expect(try await iterator.next()?.body == [.string("die")])
            peer.kill()
            let error = await #expect(throws: DBusError.self) { try await call.value }
            // The bus answers for the dead peer.
            #expect(error?.is(.noReply) == true, "\(String(describing: error))")
            #expect(error?.message.contains("disconnected") == true, "\(String(describing: error))")
            #expect(client.isConnected)
        }
    }

    @Test func aReplyOfTheWrongTypeIsATypedDecodingError() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            try await t.startPythonPeer(watchingWith: client)
            let reply = try await client.callPeer("Version")
            #expect(throws: DBusDecodingError.signatureMismatch(expected: "s", actual: "i")) { try reply.decode(String.self) }
            #expect(throws: DBusDecodingError.signatureMismatch(expected: "ii", actual: "i")) { try reply.decode(Int32.self, Int32.self) }
            let containers = try await client.callPeer("MakeContainers")
            #expect(throws: DBusDecodingError.self) {
                // Four of the reply's values, the first with the wrong value type: a signature mismatch.
                try containers.decode(
                    [String: String].self, [UInt16: DBusValue].self, [DBusObjectPath: [String: [String: DBusValue]]].self,
                    DBusValue.self)
            }
            let properties = try [String: DBusValue](dbusValue: containers.body[0])
            #expect(throws: DBusDecodingError.typeMismatch(expected: "s", actual: "u", context: "key 'Count'")) {
                try properties.require("Count", as: String.self)
            }
        }
    }

    @Test func callsWithTheWrongArgumentsGetInvalidArgs() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            let handled = Counter()
            _ = try await server.export(
                "/strict",
                interfaces: [
                    DBusInterface(localInterface, methods: [
                        DBusMethod("Take", inputs: "sa{sv}") { _ in handled.increment(); return [] },
                        DBusMethod("Give", outputs: "s") { _ in [.int32(1)] },
                        DBusMethod("Throw") { _ in struct Plain: Error {}; throw Plain() },
                    ])
                ])
            for body: [DBusValue] in [[], [.string("x")], [.string("x"), .vardict([:]), .int32(1)], [.int32(1), .vardict([:])], [.string("x"), .strings([])]] {
                let error = await #expect(throws: DBusError.self) {
                    try await client.call(destination: server.uniqueName, path: "/strict", interface: localInterface, member: "Take", body)
                }
                #expect(error?.is(.invalidArgs) == true)
                #expect(error?.message.contains("sa{sv}") == true)
            }
            #expect(handled.value == 0)
            try await client.call(destination: server.uniqueName, path: "/strict", interface: localInterface, member: "Take", [.string("x"), .vardict([:])])
            #expect(handled.value == 1)
            // A handler that returns the wrong signature, or throws a non-D-Bus error, fails as Failed.
            let wrongReturn = await #expect(throws: DBusError.self) {
                try await client.call(destination: server.uniqueName, path: "/strict", interface: localInterface, member: "Give")
            }
            #expect(wrongReturn?.is(.failed) == true)
            let plain = await #expect(throws: DBusError.self) {
                try await client.call(destination: server.uniqueName, path: "/strict", interface: localInterface, member: "Throw")
            }
            #expect(plain?.is(.failed) == true)
            // Unknown things.
            let method = await #expect(throws: DBusError.self) {
                try await client.call(destination: server.uniqueName, path: "/strict", interface: localInterface, member: "Nope")
            }
            #expect(method?.is(.unknownMethod) == true)
            let interface = await #expect(throws: DBusError.self) {
                try await client.call(destination: server.uniqueName, path: "/strict", interface: "org.handoff.Nope", member: "Take")
            }
            #expect(interface?.is(.unknownInterface) == true)
            let object = await #expect(throws: DBusError.self) {
                try await client.call(destination: server.uniqueName, path: "/nope", interface: localInterface, member: "Take")
            }
            #expect(object?.is(.unknownObject) == true)
            // Without an interface the method is found by name.
            try await client.call(destination: server.uniqueName, path: "/strict", interface: nil, member: "Take", [.string("y"), .vardict([:])])
            #expect(handled.value == 2)
        }
    }

    @Test func messagesLibdbusWouldRejectAreRefusedBeforeSending() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            let bad: [DBusMessage] = [
                .methodCall(destination: "org..bad", path: "/", interface: nil, member: "M"),
                .methodCall(destination: nil, path: "/", interface: "nodots", member: "M"),
                .methodCall(destination: nil, path: "/", interface: nil, member: "1M"),
                .methodCall(destination: client.uniqueName, path: "/", interface: nil, member: "M", body: [.string("a\0b")]),
                .methodCall(destination: client.uniqueName, path: "/", interface: nil, member: "M", body: [.dictEntry(.string("k"), .int32(1))]),
                .methodCall(destination: client.uniqueName, path: "/", interface: nil, member: "M", body: [.structure([])]),
                .methodCall(destination: client.uniqueName, path: "/", interface: nil, member: "M", body: [.array(element: .int32, [.string("x")])]),
                .methodCall(destination: client.uniqueName, path: "/", interface: nil, member: "M", body: [.variant(ValueTests.deepStruct(33))]),
                .methodCall(destination: client.uniqueName, path: "/", interface: nil, member: "M", body: [ValueTests.deepStruct(33)]),
                .methodCall(destination: client.uniqueName, path: "/", interface: nil, member: "M", body: Array(repeating: .int32(1), count: 256)),
                .methodCall(destination: client.uniqueName, path: "/", interface: nil, member: "M", body: [.variant(.structure(Array(repeating: .int32(1), count: 300)))]),
            ]
            for message in bad {
                let error = await #expect(throws: DBusError.self, "\(message)") { try await client.call(message) }
                #expect(error?.is(.invalidArgs) == true, "\(message)")
                #expect(throws: DBusError.self, "\(message)") { try client.send(message) }
            }
            var noReply = DBusMessage.methodCall(destination: client.uniqueName, path: "/", interface: nil, member: "M")
            noReply.noReplyExpected = true
            await #expect(throws: DBusError.self) { try await client.call(noReply) }
            await #expect(throws: DBusError.self) { try await client.call(.signal(path: "/", interface: "a.b", member: "S")) }
            #expect(throws: DBusError.self) { try client.emitSignal(path: "/", interface: "nodots", member: "S") }
            // The connection is unharmed.
            #expect(try await client.listNames().contains(client.uniqueName))
        }
    }

    @Test func cancellingAPendingCall() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            try await t.startPythonPeer(watchingWith: client)
            let received = try await Self.callReceived(client)
            var iterator = received.makeAsyncIterator()
            let call = Task { try await client.callPeer("NeverReply", [.string("cancel")]) }
            #expect(try await iterator.next()?.body == [.string("cancel")])
            call.cancel()
            let error = await #expect(throws: DBusError.self) { try await call.value }
            #expect(error?.is(.cancelled) == true, "\(String(describing: error))")
            // Cancelled before it starts: never sent.
            let early = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.callPeer("NeverReply", [.string("early")])
            }
            let earlyError = await #expect(throws: DBusError.self) { try await early.value }
            #expect(earlyError?.is(.cancelled) == true)
            // The connection carries on, and the early call never reached the peer:
            // the next call it reports is this marker, sent after it.
            var marker = DBusMessage.methodCall(
                destination: Peers.name, path: Peers.path, interface: Peers.interface, member: "NeverReply", body: [.string("marker")])
            marker.noReplyExpected = true
            try client.send(marker)
            #expect(try await iterator.next()?.body == [.string("marker")])
            #expect(try await client.callPeer("Version").decode(Int32.self) == 3)
        }
    }

    @Test func aKilledBusFailsEverythingAndHangsNothing() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            try await t.startPythonPeer(watchingWith: client)
            let received = try await Self.callReceived(client)
            var iterator = received.makeAsyncIterator()
            let stream = try await client.signals(matching: DBusMatchRule(interface: "org.handoff.Test.Events"))
            let owners = try await client.nameOwnerChanges(of: "org.handoff.Something")
            _ = try await client.export("/obj", interfaces: [DBusInterface(localInterface)])
            let pending = Task { try await client.callPeer("NeverReply", [.string("bus")]) }
            let consumer = Task { for try await _ in stream {} }
            let ownerConsumer = Task { for try await _ in owners {} }
            #expect(try await iterator.next()?.body == [.string("bus")])

            t.bus.stop()

            let callError = await #expect(throws: DBusError.self) { try await pending.value }
            #expect(callError?.is(.disconnected) == true, "\(String(describing: callError))")
            let streamError = await #expect(throws: DBusError.self) { try await consumer.value }
            #expect(streamError?.is(.disconnected) == true)
            await #expect(throws: DBusError.self) { try await ownerConsumer.value }
            await client.waitUntilClosed()
            #expect(!client.isConnected)
            let after = await #expect(throws: DBusError.self) { try await client.listNames() }
            #expect(after?.is(.disconnected) == true)
            await #expect(throws: DBusError.self) { _ = try await client.signals(matching: DBusMatchRule()) }
            await #expect(throws: DBusError.self) { _ = try await client.export("/other", interfaces: []) }
            #expect(throws: DBusError.self) { try client.emitSignal(path: "/", interface: "a.b", member: "S") }
        }
    }

    @Test func connectingWhereNoBusListensFails() async throws {
        let error = await #expect(throws: DBusError.self) {
            _ = try await DBusConnection.connect(to: .address("unix:path=/nonexistent/handoff-no-bus"))
        }
        #expect(error?.name.hasPrefix("org.freedesktop.DBus.Error.") == true)
        await #expect(throws: DBusError.self) { _ = try await DBusConnection.connect(to: .address("not an address")) }
    }
}

