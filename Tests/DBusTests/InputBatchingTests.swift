import DBusTestSupport
import Testing

@testable import DBus

/// `batchInput(within:)`: while signals stream in, the connection's thread reads
/// them a window's worth at a time, so it wakes about once per window rather
/// than once per message; every message still arrives, in order. Calls and
/// their replies are never held back for a window.
@Suite(.timeLimit(.minutes(1))) struct InputBatchingTests {
    static let interface = "org.handoff.Test.Stream"

    @Test func aStreamIsReadAboutOncePerWindowCompleteAndInOrder() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let batched = try await t.connect()
            let window = Duration.milliseconds(50)
            batched.batchInput(within: window)
            let stream = try await batched.signals(matching: DBusMatchRule(interface: Self.interface, member: "Tick"))
            let before = await batched.inputWakes
            // Reading the count was an interactive use: input is read at once for two
            // windows after it.
            try await Task.sleep(for: window * 3)
            let start = ContinuousClock.now
            // Signals about a millisecond apart: a wake each without batching.
            let count: UInt32 = 200
            for index in 0..<count {
                try emitter.emitSignal(path: "/e", interface: Self.interface, member: "Tick", [.uint32(index)])
                try await Task.sleep(for: .milliseconds(1))
            }
            var expected: UInt32 = 0
            for try await signal in stream {
                #expect(signal.body == [.uint32(expected)])
                expected += 1
                if expected == count { break }
            }
            let elapsed = ContinuousClock.now - start
            #expect(expected == count)
            let wakes = await batched.inputWakes - before
            // However slowly the emitter ran: at most about one wake per window, and
            // a few while the stream starts and ends. Without batching: one per signal.
            let bound = UInt64(elapsed / window * 1.25) + 6
            #expect(wakes <= bound, "\(wakes) wakes for \(count) signals in \(elapsed), at most \(bound) expected")
            #expect(wakes < UInt64(count))
        }
    }

    /// A call made while the connection waits out a window to gather streaming input is sent at
    /// once, not when the window ends.
    @Test func aCallMadeWhileInputIsGatheredIsNotHeldForTheWindow() async throws {
        try await TestBus.run { t in
            let emitter = try await t.connect()
            let batched = try await t.connect()
            let window = Duration.seconds(2)
            batched.batchInput(within: window)
            let stream = try await batched.signals(matching: DBusMatchRule(interface: Self.interface, member: "Tick"))
            // Out of the two windows after the interactive use above.
            try await Task.sleep(for: window * 2 + .milliseconds(100))
            let streaming = Task {
                for index in 0..<UInt32(600) {
                    try emitter.emitSignal(path: "/e", interface: Self.interface, member: "Tick", [.uint32(index)])
                    try await Task.sleep(for: .milliseconds(1))
                }
            }
            // The signals stream in: after the second wake the loop gathers for a window.
            try await Task.sleep(for: .milliseconds(300))
            let start = ContinuousClock.now
            let reply = try await batched.call(
                destination: DBusConnection.busName, path: DBusConnection.busPath,
                interface: DBusConnection.busInterface, member: "GetId")
            let waited = ContinuousClock.now - start
            try await streaming.value
            #expect(reply.body.count == 1)
            #expect(await batched.inputGathers >= 1, "the loop never gathered input: the test proves nothing")
            // Held for the window, it would take up to 2 s.
            #expect(waited < window / 2, "the call took \(waited) while input was gathered")
            var received: UInt32 = 0
            for try await _ in stream {
                received += 1
                if received == 600 { break }
            }
        }
    }

    @Test func callsAndRepliesAreNeverHeldBack() async throws {
        try await TestBus.run { t in
            let client = try await t.connect()
            client.batchInput(within: .milliseconds(50))
            for _ in 0..<50 {
                let reply = try await client.call(
                    destination: DBusConnection.busName, path: DBusConnection.busPath,
                    interface: DBusConnection.busInterface, member: "GetId")
                #expect(reply.body.count == 1)
            }
            #expect(await client.inputGathers == 0)
        }
    }
}
