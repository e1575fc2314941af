import DBusTestSupport
import Foundation
import HandoffProtocol
import Testing

/// Issue 20, item 12: continuing the same activity again (a retry, a second
/// app) is as fast as the first time. The first continuation used to remove the
/// origin's Device1 (RemoveDevice) at once, so the second waited, seconds, until
/// bluetoothd heard the origin again.
@Suite(.serialized) struct ContinueAgainSystemTests {
    @Test func aSecondContinuationOfTheSameActivityIsAsFastAsTheFirst() async throws {
        // A renews its beacon (a new address on the simulator) every 10 s, not every second:
        // what is measured is the continuing side, not the origin moving away.
        let laptops = try await TwoLaptops(expirySeconds: 30)
        let publisher = try await laptops.a.client()
        _ = try await publisher.call(
            .publish, PublishParams(type: TwoLaptops.type, title: "Twice", webpageURL: "https://example.org/twice"),
            as: PublishResult.self)
        let viewer = try await laptops.b.client()
        try await eventually { try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities.count == 1 }
        let nearby = try await viewer.call(.list, EmptyResult(), as: ListResult.self).activities[0]

        func continueOnce() async throws -> Duration {
            let started = ContinuousClock.now
            _ = try await viewer.call(.continue, ContinueParams(id: nearby.id, timeout: 20), as: WillContinue.self)
            let line = try #require(try await viewer.event(.continued, timeout: .seconds(25)), "no continued event")
            #expect(try WireFormat.eventData(ContinuedEvent.self, from: line).activity.title == "Twice")
            return ContinuousClock.now - started
        }
        let first = try await continueOnce()
        // A retry soon after, and another right after that: the link is still up.
        try await Task.sleep(for: .milliseconds(500))
        let second = try await continueOnce()
        let third = try await continueOnce()
        // Once the link is gone (5 s kept, 2 s to disconnect), the device is still known: fast again.
        try await Task.sleep(for: .seconds(8))
        let fourth = try await continueOnce()
        #expect(fourth < first + .milliseconds(1500), "first \(first), fourth \(fourth)")
        let trace = laptops.b.log.split(separator: "\n").filter { $0.contains("continu") }.joined(separator: "\n")
        #expect(second < first + .milliseconds(1500), "first \(first), second \(second); B's log:\n\(trace)")
        #expect(third < first + .milliseconds(1500), "first \(first), third \(third)")
        await laptops.stop()
    }
}
