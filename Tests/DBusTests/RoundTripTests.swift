import DBus
import DBusTestSupport
import Testing

/// Every type through a real bus: between two of our connections, and against
/// python3-dbus in both directions, so our marshalling is checked against another
/// implementation and not only against itself.
@Suite(.timeLimit(.minutes(2))) struct RoundTripTests {
    /// An object with one `EchoN` method per sample, typed with that sample's signature.
    static func echoInterface(_ samples: [DBusValue]) -> DBusInterface {
        DBusInterface(
            localInterface,
            methods: samples.enumerated().map { index, sample in
                let signature = DBusSignature(types: [sample.type])
                return DBusMethod("Echo\(index)", inputs: signature, outputs: signature) { call in call.body }
            } + [
                DBusMethod("EchoAll", inputs: DBusSignature(types: samples.map(\.type)), outputs: DBusSignature(types: samples.map(\.type))) { call in
                    call.body
                }
            ])
    }

    @Test func everyTypeBetweenOurOwnConnections() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            let fd = try pipeHolding("through the bus")
            let samples = Samples.all + [.unixFD(fd), .variant(.unixFD(fd)), .array(element: .unixFD, [.unixFD(fd), .unixFD(fd)])]
            _ = try await server.export("/echo", interfaces: [Self.echoInterface(samples)])
            for (index, sample) in samples.enumerated() {
                let reply = try await client.call(
                    destination: server.uniqueName, path: "/echo", interface: localInterface, member: "Echo\(index)", [sample])
                #expect(reply.signature.rawValue == sample.type.signature)
                #expect(describe(reply.body) == describe(sample), "sample \(index): \(sample.type)")
            }
            // All of them at once, as one message.
            let reply = try await client.call(
                destination: server.uniqueName, path: "/echo", interface: localInterface, member: "EchoAll", samples)
            #expect(describe(reply.body) == describe(samples))
            // Equality survives too, where the value has one (NaN is not equal to itself).
            let comparable = Samples.all.filter { $0 == $0 }
            #expect(Array(reply.body.prefix(Samples.all.count)).filter { $0 == $0 } == comparable)
        }
    }

    /// The deepest values `validate` lets through are ones the bus and libdbus accept.
    @Test func theNestingLimitsPassTheBus() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            var arrays = DBusValue.int32(1)
            for _ in 0..<DBusSignature.maximumDepth { arrays = .array(element: arrays.type, [arrays]) }
            var structs = DBusValue.int32(1)
            for _ in 0..<DBusSignature.maximumDepth { structs = .structure([structs]) }
            var both = DBusValue.int32(1)
            for _ in 0..<DBusSignature.maximumDepth { both = .array(element: .structure([both.type]), [.structure([both])]) }
            let samples = [ValueTests.nested(DBusValue.maximumNesting), arrays, structs, both, .variant(structs)]
            for sample in samples { try sample.validate() }
            _ = try await server.export("/deep", interfaces: [Self.echoInterface(samples)])
            for (index, sample) in samples.enumerated() {
                let reply = try await client.call(
                    destination: server.uniqueName, path: "/deep", interface: localInterface, member: "Echo\(index)", [sample])
                #expect(reply.body == [sample], "sample \(index)")
            }
            #expect(client.isConnected && server.isConnected)
        }
    }

    @Test func fileDescriptorsArriveOpenAndReadable() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            _ = try await server.export(
                "/fd",
                interfaces: [
                    DBusInterface(
                        localInterface,
                        methods: [
                            DBusMethod("Read", inputs: "h", outputs: "s") { call in
                                [.string(readAll(try DBusUnixFD(dbusValue: call.body[0])))]
                            },
                            DBusMethod("Open", outputs: "h") { _ in [.unixFD(try pipeHolding("from the server"))] },
                        ])
                ])
            let read = try await client.call(
                destination: server.uniqueName, path: "/fd", interface: localInterface, member: "Read",
                [.unixFD(try pipeHolding("from the client"))])
            #expect(try read.decode(String.self) == "from the client")
            let opened = try await client.call(
                destination: server.uniqueName, path: "/fd", interface: localInterface, member: "Open")
            #expect(readAll(try opened.decode(DBusUnixFD.self)) == "from the server")
        }
    }

    // MARK: Against python3-dbus

    @Test func pythonDecodesWhatWeEncode() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            try await t.startPythonPeer(watchingWith: client)
            let fd = try pipeHolding("x")
            for sample in Samples.all + [.unixFD(fd), .variant(.unixFD(fd))] {
                let theirs = try await client.callPeer("Describe", [sample]).decode(String.self)
                #expect(theirs == describe(sample), "\(sample.type)")
            }
            // Several arguments in one message.
            let body = Array(Samples.basics.prefix(12))
            #expect(try await client.callPeer("Describe", body).decode(String.self) == describe(body))
        }
    }

    @Test func weDecodeWhatPythonEncodes() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            try await t.startPythonPeer(watchingWith: client)
            let basics = try await client.callPeer("MakeBasics")
            #expect(basics.signature == "ybnqiuxtdsog")
            #expect(basics.body == PythonValues.basics)
            let containers = try await client.callPeer("MakeContainers")
            #expect(containers.signature == "a{sv}a{qv}a{oa{sa{sv}}}(ias)vva(yv)aayas")
            #expect(containers.body == PythonValues.containers)
            for (ours, expected) in zip(containers.body, PythonValues.containers) {
                #expect(describe(ours) == describe(expected))
            }
            // The typed view of the same replies.
            // (Twelve values: one by one; `decode` takes at most four at once.)
            let values = basics.body
            let (byte, flag) = (try UInt8(dbusValue: values[0]), try Bool(dbusValue: values[1]))
            let (big, real) = (try UInt64(dbusValue: values[7]), try Double(dbusValue: values[8]))
            let text = try String(dbusValue: values[9])
            let (path, signature) = (try DBusObjectPath(dbusValue: values[10]), try DBusSignature(dbusValue: values[11]))
            #expect(byte == 255 && flag && big == .max && real == -1.5 && text == "grüße ✓ 😀")
            #expect(path == "/org/handoff/a_1/B2" && signature == "a{sv}(iay)")
            let manufacturer = try [UInt16: DBusValue](dbusValue: containers.body[1])
            #expect(manufacturer[0x004C]?.bytes == [0x12, 0x34])
            let managed = try [DBusObjectPath: [String: [String: DBusValue]]](dbusValue: containers.body[2])
            #expect(try managed["/org/bluez/hci0"]?["org.bluez.Adapter1"]?.require("Powered", as: Bool.self) == true)
            let fd = try await client.callPeer("MakeFD").decode(DBusUnixFD.self)
            #expect(readAll(fd) == "hello from python")
        }
    }

    @Test func pythonEchoesEveryTypeBack() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            try await t.startPythonPeer(watchingWith: client)
            for sample in Samples.all {
                let reply = try await client.callPeer("Echo", [sample])
                #expect(describe(reply.body) == describe(sample), "\(sample.type)")
            }
            let all = try await client.callPeer("Echo", Samples.containers)
            #expect(all.body == Samples.containers)
            let fd = try await client.callPeer("Echo", [.unixFD(try pipeHolding("echoed"))]).decode(DBusUnixFD.self)
            #expect(readAll(fd) == "echoed")
            #expect(try await client.callPeer("ReadFD", [.unixFD(try pipeHolding("to python"))]).decode(String.self) == "to python")
        }
    }

    /// Python calls our exported object: it encodes, we decode and answer, it checks.
    @Test func pythonCallsOurObject() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            try await t.startPythonPeer(watchingWith: server)
            _ = try await server.export(
                "/local",
                interfaces: [
                    DBusInterface(
                        localInterface,
                        methods: [
                            DBusMethod("EchoBasics", inputs: "ybnqiuxtdsog", outputs: "ybnqiuxtdsog") { $0.body },
                            DBusMethod(
                                "EchoContainers", inputs: "a{sv}a{qv}a{oa{sa{sv}}}(ias)vva(yv)aayas",
                                outputs: "a{sv}a{qv}a{oa{sa{sv}}}(ias)vva(yv)aayas"
                            ) { $0.body },
                            DBusMethod("Describe", inputs: "v", outputs: "s") { [.string(describe($0.body[0]))] },
                            DBusMethod("ReadFD", inputs: "h", outputs: "s") { call in
                                [.string(readAll(try DBusUnixFD(dbusValue: call.body[0])))]
                            },
                            DBusMethod("Fail") { _ in
                                throw DBusError(name: "org.handoff.Test.Error.Custom", message: "custom failure")
                            },
                        ])
                ])
            let results = try await server.pythonChecks("values", against: "/local")
            expectAllPassed(results, atLeast: 11)
        }
    }
}
