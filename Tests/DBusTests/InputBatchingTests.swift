import DBusTestSupport
import Testing

@testable import DBus

/// `batchInput(within:)`: while signals stream in, the connection's thread reads
/// them a window's worth at a time, so it wakes far fewer times than a
/// connection without batching that hears the same stream; every message still
/// arrives, in order, and calls still get replies.
@Suite(.timeLimit(.minutes(1))) struct InputBatchingTests {
    static let interface = "org.handoff.Test.Stream"

    @Test func aStreamIsReadInBatchesCompleteAndInOrder() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let batched = try await t.connect()
            let plain = try await t.connect()
            // Wide, so that a loaded machine's late emitter still streams within it.
            batched.batchInput(within: .milliseconds(200))
            let rule = DBusMatchRule(interface: Self.interface, member: "Tick")
            let batchedStream = try await batched.signals(matching: rule)
            let plainStream = try await plain.signals(matching: rule)
            let before = (await batched.inputWakes, await plain.inputWakes)
            // Signals about a millisecond apart: about a wake each without batching.
            let count: UInt32 = 100
            for index in 0..<count {
                try emitter.emitSignal(path: "/e", interface: Self.interface, member: "Tick", [.uint32(index)])
                try await Task.sleep(for: .milliseconds(1))
            }
            for stream in [batchedStream, plainStream] {
                var expected: UInt32 = 0
                for try await signal in stream {
                    #expect(signal.body == [.uint32(expected)])
                    expected += 1
                    if expected == count { break }
                }
                #expect(expected == count)
            }
            let wakes = (await batched.inputWakes - before.0, await plain.inputWakes - before.1)
            #expect(wakes.0 * 2 <= wakes.1, "\(wakes.0) wakes with batching, \(wakes.1) without, for \(count) signals")
            // Calls still get their replies.
            let reply = try await batched.call(
                destination: DBusConnection.busName, path: DBusConnection.busPath,
                interface: DBusConnection.busInterface, member: "GetId")
            #expect(reply.body.count == 1)
        }
    }
}
