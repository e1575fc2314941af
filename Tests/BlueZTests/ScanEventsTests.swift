@testable import BlueZ
import DBus
import Testing

/// `ScanEvents`: a bounded buffer that keeps the newest events, shared by its
/// iterators, finished by the scanner or by a cancelled wait.
@Suite(.timeLimit(.minutes(1))) struct ScanEventsTests {
    /// Event number `n`: a report whose address is the number.
    static func event(_ n: Int) -> ScanEvent {
        .report(
            AdvertisementReport(
                adapter: "/org/bluez/hci0", device: try! DBusObjectPath("/org/bluez/hci0/dev_\(n)"), address: "\(n)",
                addressType: "random", rssi: nil, companyID: 0xFFFF, data: [], receivedAt: .now))
    }

    static func number(_ event: ScanEvent?) -> Int? {
        guard case .report(let report)? = event else { return nil }
        return Int(report.address)
    }

    @Test func keepsTheNewestAndCountsWhatItDrops() async {
        let channel = ScanEventChannel(capacity: 10)
        let events = ScanEvents(channel: channel)
        var dropped = 0
        for n in 0..<25 { dropped += channel.append(contentsOf: [Self.event(n)]) }
        dropped += channel.append(contentsOf: (25..<30).map(Self.event))
        #expect(dropped == 20)
        channel.finish()
        var numbers: [Int] = []
        for await event in events { numbers.append(Self.number(event) ?? -1) }
        #expect(numbers == Array(20..<30))
    }

    /// The scanner hands its batches over by moving them: swapped into an
    /// empty buffer, appended behind unread events, and never kept twice.
    @Test func batchesMovedInArriveInOrderAndLeaveTheSourceEmpty() async {
        let channel = ScanEventChannel(capacity: 10)
        let events = ScanEvents(channel: channel)
        var batch = (0..<4).map(Self.event)
        #expect(channel.append(moving: &batch) == 0)
        #expect(batch.isEmpty)
        var iterator = events.makeAsyncIterator()
        #expect(Self.number(await iterator.next()) == 0)
        // Behind the three unread ones, and past the capacity: the oldest go.
        batch = (4..<12).map(Self.event)
        #expect(channel.append(moving: &batch) == 1)
        #expect(batch.isEmpty)
        // Everything read, then a batch into the emptied buffer.
        var read: [Int] = []
        for _ in 0..<10 { read.append(Self.number(await iterator.next()) ?? -1) }
        #expect(read == Array(2..<12))
        batch = [Self.event(12)]
        channel.append(moving: &batch)
        channel.finish()
        batch = [Self.event(13)]
        #expect(channel.append(moving: &batch) == 0 && batch.isEmpty)
        var rest: [Int] = []
        for await event in events { rest.append(Self.number(event) ?? -1) }
        #expect(rest == [12])
    }

    @Test func iteratorsShareOneBufferInOrder() async {
        let channel = ScanEventChannel(capacity: 100)
        let events = ScanEvents(channel: channel)
        channel.append(contentsOf: (0..<6).map(Self.event))
        var first = events.makeAsyncIterator()
        #expect(Self.number(await first.next()) == 0)
        #expect(Self.number(await first.next()) == 1)
        var second = events.makeAsyncIterator()
        #expect(Self.number(await second.next()) == 2)
        channel.finish()
        var rest: [Int] = []
        for await event in events { rest.append(Self.number(event) ?? -1) }
        #expect(rest == [3, 4, 5])
    }

    @Test func aWaitingConsumerGetsTheNextEventAndCancellationEndsTheSequence() async throws {
        let channel = ScanEventChannel(capacity: 10)
        let events = ScanEvents(channel: channel)
        let reader = Task { () -> [Int] in
            var numbers: [Int] = []
            for await event in events { numbers.append(Self.number(event) ?? -1) }
            return numbers
        }
        try await Task.sleep(for: .milliseconds(50))
        channel.append(contentsOf: [Self.event(7)])
        try await Task.sleep(for: .milliseconds(50))
        reader.cancel()
        #expect(await reader.value == [7])
    }
}
