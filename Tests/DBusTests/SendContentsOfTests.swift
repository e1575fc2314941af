import DBus
import DBusTestSupport
import Testing

/// `send(contentsOf:)`: a burst handed to the connection's thread at once.
@Suite(.timeLimit(.minutes(1))) struct SendContentsOfTests {
    static let interface = "org.handoff.Test.Burst"

    @Test func sendsEveryMessageInOrder() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let receiver = try await t.connect()
            let stream = try await receiver.signals(matching: DBusMatchRule(interface: Self.interface, member: "Item"))
            for batch in 0..<20 as Range<UInt32> {
                try emitter.send(
                    contentsOf: (0..<50 as Range<UInt32>).map { index in
                        .signal(path: "/e", interface: Self.interface, member: "Item", body: [.uint32(batch * 50 + index)])
                    })
            }
            var expected: UInt32 = 0
            for try await signal in stream {
                #expect(signal.body == [.uint32(expected)])
                expected += 1
                if expected == 1000 { break }
            }
            #expect(expected == 1000)
        }
    }

    @Test func sendsNothingWhenOneMessageIsInvalid() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let receiver = try await t.connect()
            let stream = try await receiver.signals(matching: DBusMatchRule(interface: Self.interface))
            var iterator = stream.makeAsyncIterator()
            let good = DBusMessage.signal(path: "/e", interface: Self.interface, member: "Item", body: [.uint32(1)])
            let bad = DBusMessage.signal(path: "/e", interface: Self.interface, member: "not a member name")
            #expect(throws: (any Error).self) { try emitter.send(contentsOf: [good, bad]) }
            // The next signal received is the marker sent afterwards, not `good`.
            try emitter.emitSignal(path: "/e", interface: Self.interface, member: "Marker")
            let first = try #require(try await iterator.next())
            #expect(first.member == "Marker")
        }
    }
}
