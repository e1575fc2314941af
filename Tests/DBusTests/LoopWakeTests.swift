import DBus
import DBusTestSupport
import Testing

/// The connection's thread does not wake itself: work queued from it (by a
/// signal handler, or by libdbus while it reads) is picked up before the loop
/// waits again, without a write to its eventfd.
@Suite(.timeLimit(.minutes(1))) struct LoopWakeTests {
    static let interface = "org.handoff.Test.Relay"

    /// Each Pong is sent from a signal handler, so it is queued from the
    /// connection's own thread; the next Ping waits for it. A loop that slept
    /// with that job queued would stall here until the time limit.
    @Test func sendsWhatItsOwnThreadQueues() async throws {
        try await TestBus.run { t in
            let relay = try await t.connect()
            let client = try await t.connect()
            let handler = try await relay.addSignalHandler(
                matching: DBusMatchRule(interface: Self.interface, member: "Ping")
            ) { message in
                try? relay.emitSignal(path: "/relay", interface: Self.interface, member: "Pong", message.body)
            }
            let pongs = try await client.signals(
                matching: DBusMatchRule(sender: relay.uniqueName, interface: Self.interface, member: "Pong"))
            var iterator = pongs.makeAsyncIterator()
            for index in 0..<50 as Range<UInt32> {
                try client.emitSignal(path: "/client", interface: Self.interface, member: "Ping", [.uint32(index)])
                let pong = try #require(try await iterator.next())
                #expect(pong.body == [.uint32(index)])
            }
            handler.cancel()
        }
    }

    /// Many signals read in one go (libdbus calls its wakeup function for each
    /// one it queues) are all dispatched, in order.
    @Test func dispatchesEverySignalOfABurst() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let receiver = try await t.connect()
            let stream = try await receiver.signals(matching: DBusMatchRule(interface: Self.interface, member: "Burst"))
            for index in 0..<2000 as Range<UInt32> {
                try emitter.emitSignal(path: "/e", interface: Self.interface, member: "Burst", [.uint32(index)])
            }
            var expected: UInt32 = 0
            for try await signal in stream {
                #expect(signal.body == [.uint32(expected)])
                expected += 1
                if expected == 2000 { break }
            }
            #expect(expected == 2000)
        }
    }
}
