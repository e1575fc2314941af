import DBus
import DBusTestSupport
import Testing

/// Signal subscriptions against a real bus.
///
/// "Not delivered" is checked without waiting: a message that should be dropped
/// is sent first and one that should arrive is sent after it, by the same
/// sender, so the bus keeps them in order; the first message received must be
/// the second one.
@Suite(.timeLimit(.minutes(1))) struct SignalTests {
    static let events = "org.handoff.Test.Events"

    @Test func deliversTypedSignalsBetweenOurConnections() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let receiver = try await t.connect()
            let stream = try await receiver.signals(matching: DBusMatchRule(interface: Self.events, member: "Data"))
            var signals = stream.makeAsyncIterator()
            let body = Samples.containers
            try emitter.emitSignal(path: "/e", interface: Self.events, member: "Other")
            try emitter.emitSignal(path: "/e", interface: Self.events, member: "Data", body)
            let signal = try #require(try await signals.next())
            #expect(signal.kind == .signal && signal.sender == emitter.uniqueName && signal.path == "/e")
            #expect(signal.interface == Self.events && signal.member == "Data")
            #expect(describe(signal.body) == describe(body))

            // Unicast signals reach only their destination.
            let bystander = try await t.connect()
            try emitter.emitSignal(path: "/e", interface: Self.events, member: "Data", [.string("to bystander")], destination: bystander.uniqueName)
            try emitter.emitSignal(path: "/e", interface: Self.events, member: "Data", [.string("to receiver")], destination: receiver.uniqueName)
            #expect(try await signals.next()?.body == [.string("to receiver")])
        }
    }

    @Test func receivesSignalsFromPython() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let owner = try await t.startPythonPeer(watchingWith: receiver)
            _ = owner
            let ticks = try await receiver.signals(matching: DBusMatchRule(sender: Peers.name, interface: Peers.interface, member: "Tick"))
            let typed = try await receiver.signals(matching: DBusMatchRule(sender: Peers.name, interface: Peers.interface, member: "Typed"))
            try await receiver.callPeer("Emit", [.uint32(100), .string("batch")])
            var count: UInt32 = 0
            for try await tick in ticks {
                let (index, tag) = try tick.decode(UInt32.self, String.self)
                #expect(index == count && tag == "batch")
                count += 1
                if count == 100 { break }
            }
            try await receiver.callPeer("EmitTyped")
            var iterator = typed.makeAsyncIterator()
            let signal = try #require(try await iterator.next())
            #expect(signal.body == Array(PythonValues.containers.prefix(3)))
        }
    }

    @Test func pythonReceivesOurSignals() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            try await t.startPythonPeer(watchingWith: emitter)
            try await emitter.callPeer("Watch", [.string("type='signal',interface='\(Self.events)'")])
            let fd = try pipeHolding("x")
            let bodies: [[DBusValue]] = [[], Samples.basics, Samples.containers, [.unixFD(fd)]]
            for body in bodies { try emitter.emitSignal(path: "/e", interface: Self.events, member: "Data", body) }
            let seen = try await emitter.callPeer("Received").decode([String].self).filter { $0.hasPrefix(Self.events) }
            #expect(seen == bodies.map { "\(Self.events).Data \(describe($0))" })
        }
    }

    @Test func busRoutesByOurRuleText() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let receiver = try await t.connect()
            let awkward = #"it's, "quoted" \ back='slash'"#
            let rules: [(DBusMatchRule, [DBusValue])] = [
                (DBusMatchRule(interface: Self.events, arguments: [0: awkward]), [.string(awkward)]),
                (DBusMatchRule(interface: Self.events, arguments: [1: "x"]), [.string("a"), .string("x")]),
                (DBusMatchRule(interface: Self.events, path: "/a/b"), []),
                (DBusMatchRule(interface: Self.events, pathNamespace: "/ns"), []),
                (DBusMatchRule(interface: Self.events, argumentPaths: [0: "/org/bluez/"]), [.objectPath("/org/bluez/hci0")]),
            ]
            let baseline = try await receiver.busMatchRuleCount(of: receiver.uniqueName)
            var streams: [AsyncThrowingStream<DBusMessage, Error>] = []
            for (index, (rule, body)) in rules.enumerated() {
                let stream = try await receiver.signals(matching: rule)
                streams.append(stream)
                var iterator = stream.makeAsyncIterator()
                let member = "M\(index)"
                let path: DBusObjectPath = index == 2 ? "/a/b" : index == 3 ? "/ns/deeper" : "/e"
                // Near misses first, then the match.
                try emitter.emitSignal(path: "/a", interface: Self.events, member: member, [.string("it's")])
                try emitter.emitSignal(path: "/nsx", interface: Self.events, member: member, [.string("a"), .string("y")])
                try emitter.emitSignal(path: "/a/b/c", interface: Self.events, member: member, [.objectPath("/org/bluezz")])
                try emitter.emitSignal(path: path, interface: Self.events, member: member, body)
                let signal = try #require(try await iterator.next())
                #expect(signal.path == path && signal.body == body, "rule \(rule.text)")
            }
            // The bus holds each rule once, the awkward argument as we quoted it.
            #expect(try await receiver.busMatchRuleCount(of: receiver.uniqueName) == baseline + UInt32(streams.count))
            let stored = try await receiver.busMatchRules(of: receiver.uniqueName)
            #expect(stored.contains { $0.contains(#"arg0='it'\''s, "quoted" \ back='\''slash'\'''"#) }, "\(stored)")
        }
    }

    @Test func wellKnownSenderFollowsTheOwner() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let first = try await t.connect()
            let second = try await t.connect()
            let stream = try await receiver.signals(matching: DBusMatchRule(sender: "org.handoff.Service", interface: Self.events))
            var signals = stream.makeAsyncIterator()
            let owners = try await receiver.nameOwnerChanges(of: "org.handoff.Service")
            var ownerChanges = owners.makeAsyncIterator()
            #expect(try await ownerChanges.next() == .some(nil))

            #expect(try await first.requestName("org.handoff.Service", flags: [.allowReplacement]) == .primaryOwner)
            #expect(try await ownerChanges.next() == first.uniqueName)
            try second.emitSignal(path: "/s", interface: Self.events, member: "FromSecond")
            // The receiver has handled (and dropped) FromSecond once it answers second's Ping.
            try await Self.barrier(from: second, to: receiver)
            try first.emitSignal(path: "/s", interface: Self.events, member: "FromFirst")
            #expect(try await signals.next()?.member == "FromFirst")

            #expect(try await second.requestName("org.handoff.Service", flags: [.replaceExisting]) == .primaryOwner)
            #expect(try await ownerChanges.next() == second.uniqueName)
            try first.emitSignal(path: "/s", interface: Self.events, member: "FromFirst")
            try await Self.barrier(from: first, to: receiver)
            try second.emitSignal(path: "/s", interface: Self.events, member: "FromSecond")
            #expect(try await signals.next()?.member == "FromSecond")
        }
    }

    /// Returns once `to` has dispatched everything `from` sent before: libdbus answers
    /// Peer.Ping in order with the messages before it.
    static func barrier(from: DBusConnection, to: DBusConnection) async throws {
        try await from.call(destination: to.uniqueName, path: .root, interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }

    // MARK: Ending a subscription removes its rule at the bus

    @Test func cancellingTheConsumerRemovesTheRule() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let emitter = try await t.connect()
            let baseline = try await receiver.busMatchRuleCount(of: receiver.uniqueName)
            let rule = DBusMatchRule(interface: Self.events, member: "Tick")
            let stream = try await receiver.signals(matching: rule)
            #expect(try await receiver.busMatchRuleCount(of: receiver.uniqueName) == baseline + 1)
            #expect(try await receiver.busMatchRules(of: receiver.uniqueName).contains(rule.text))

            let consumer = Task {
                var count = 0
                for try await _ in stream { count += 1 }
                return count
            }
            try emitter.emitSignal(path: "/e", interface: Self.events, member: "Tick")
            // The consumer is now waiting (or about to wait) in the stream; cancel it.
            consumer.cancel()
            _ = try await consumer.value
            // RemoveMatch was queued when the stream ended, before this call: the bus has it.
            #expect(try await receiver.busMatchRuleCount(of: receiver.uniqueName) == baseline)
            #expect(try await !receiver.busMatchRules(of: receiver.uniqueName).contains(rule.text))
        }
    }

    static func subscribeAndDrop(_ connection: DBusConnection, _ rule: DBusMatchRule) async throws {
        let stream = try await connection.signals(matching: rule)
        _ = stream
    }

    @Test func droppingTheStreamRemovesTheRule() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let baseline = try await receiver.busMatchRuleCount(of: receiver.uniqueName)
            try await Self.subscribeAndDrop(receiver, DBusMatchRule(interface: Self.events, member: "Dropped"))
            #expect(try await receiver.busMatchRuleCount(of: receiver.uniqueName) == baseline)
        }
    }

    @Test func breakingOutOfTheLoopRemovesTheRule() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let baseline = try await receiver.busMatchRuleCount(of: receiver.uniqueName)
            try await Self.consumeOne(receiver)
            #expect(try await receiver.busMatchRuleCount(of: receiver.uniqueName) == baseline)
        }
    }

    static func consumeOne(_ connection: DBusConnection) async throws {
        let stream = try await connection.signals(matching: DBusMatchRule(interface: events, member: "One"))
        try connection.emitSignal(path: "/e", interface: events, member: "One")
        for try await _ in stream { break }
    }

    @Test func wellKnownSenderRulesAreRemovedWithTheLastSubscription() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let baseline = try await receiver.busMatchRules(of: receiver.uniqueName)
            let first = try await receiver.signals(matching: DBusMatchRule(sender: "org.handoff.Service", member: "A"))
            let second = try await receiver.signals(matching: DBusMatchRule(sender: "org.handoff.Service", member: "B"))
            // Two subscription rules and one shared NameOwnerChanged rule for the sender.
            let during = try await receiver.busMatchRules(of: receiver.uniqueName)
            #expect(during.count == baseline.count + 3)
            #expect(during.contains { $0.contains("NameOwnerChanged") && $0.contains("arg0='org.handoff.Service'") })
            let ended = Task { for try await _ in first {} }
            ended.cancel()
            try? await ended.value
            #expect(try await receiver.busMatchRules(of: receiver.uniqueName).count == baseline.count + 2)
            let other = Task { for try await _ in second {} }
            other.cancel()
            try? await other.value
            #expect(try await receiver.busMatchRules(of: receiver.uniqueName) == baseline)
        }
    }

    @Test func endingNameOwnerChangesRemovesItsRule() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let baseline = try await receiver.busMatchRuleCount(of: receiver.uniqueName)
            let owners = try await receiver.nameOwnerChanges(of: "org.handoff.Watched")
            #expect(try await receiver.busMatchRuleCount(of: receiver.uniqueName) == baseline + 1)
            let consumer = Task { for try await _ in owners {} }
            consumer.cancel()
            try? await consumer.value
            // The inner subscription ends on its own task: wait for the bus to say so.
            let removed = try await pollUntil { try await receiver.busMatchRuleCount(of: receiver.uniqueName) == baseline }
            #expect(removed)
        }
    }

    @Test func invalidRulesAreRefusedBeforeTheBus() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let baseline = try await receiver.busMatchRuleCount(of: receiver.uniqueName)
            let error = await #expect(throws: DBusError.self) {
                _ = try await receiver.signals(matching: DBusMatchRule(member: "not.valid"))
            }
            #expect(error?.is(.matchRuleInvalid) == true)
            await #expect(throws: DBusError.self) { _ = try await receiver.nameOwnerChanges(of: "no") }
            #expect(try await receiver.busMatchRuleCount(of: receiver.uniqueName) == baseline)
        }
    }

    @Test func streamsFinishWhenTheConnectionCloses() async throws {
        try await TestBus.run { t in
            let receiver = try await t.connect()
            let stream = try await receiver.signals(matching: DBusMatchRule(interface: Self.events))
            let owners = try await receiver.nameOwnerChanges(of: "org.handoff.Any")
            let consumer = Task {
                for try await _ in stream {}
            }
            let ownerConsumer = Task {
                for try await _ in owners {}
            }
            await receiver.close()
            let error = await #expect(throws: DBusError.self) { try await consumer.value }
            #expect(error?.is(.disconnected) == true)
            let ownerError = await #expect(throws: DBusError.self) { try await ownerConsumer.value }
            #expect(ownerError?.is(.disconnected) == true)
        }
    }
}
