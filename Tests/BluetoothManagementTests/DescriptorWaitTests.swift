import Glibc
import Testing

@testable import BluetoothManagement

/// The wait under the listener and the connector, on socket pairs and eventfds.
@Suite struct DescriptorWaitTests {
    private func withPair<R>(_ body: (Int32, Int32) async throws -> R) async throws -> R {
        var fds: [Int32] = [-1, -1]
        try #require(socketpair(AF_UNIX, Int32(SOCK_SEQPACKET.rawValue), 0, &fds) == 0)
        defer {
            close(fds[0])
            close(fds[1])
        }
        return try await body(fds[0], fds[1])
    }

    @Test func readyWhenThePeerWrites() async throws {
        try await withPair { ours, theirs in
            async let outcome = DescriptorWait.wait(for: ours, events: Int16(POLLIN))
            #expect(write(theirs, "x", 1) == 1)
            #expect(await outcome == .ready(revents: Int16(POLLIN)))
        }
    }

    @Test func timesOut() async throws {
        try await withPair { ours, _ in
            #expect(await DescriptorWait.wait(for: ours, events: Int16(POLLIN), timeout: .milliseconds(50)) == .timedOut)
        }
    }

    @Test func theWakeDescriptorWins() async throws {
        try await withPair { ours, _ in
            var wake: [Int32] = [-1, -1]
            try #require(pipe(&wake) == 0)
            defer {
                close(wake[0])
                close(wake[1])
            }
            let wakeEnd = wake[0]
            async let outcome = DescriptorWait.wait(for: ours, events: Int16(POLLIN), wake: wakeEnd)
            #expect(write(wake[1], "w", 1) == 1)
            #expect(await outcome == .woken)
        }
    }

    @Test func cancellingTheTaskEndsTheWait() async throws {
        try await withPair { ours, _ in
            let task = Task { await DescriptorWait.wait(for: ours, events: Int16(POLLIN)) }
            task.cancel()
            #expect(await task.value == .cancelled)
        }
    }
}
