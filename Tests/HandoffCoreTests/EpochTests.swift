import Testing
@testable import HandoffCore

@Suite struct EpochTests {
    @Test("Epoch boundaries")
    func boundaries() {
        #expect(Epoch(containing: 0.0).index == 0)
        #expect(Epoch(containing: 599.999).index == 0)
        #expect(Epoch(containing: 600.0).index == 1)
        #expect(Epoch(containing: UInt64(1_740_000_300), length: 600).index == 2_900_000)
        let epoch = Epoch(index: 2_900_000, length: 600)
        #expect(epoch.startSeconds == 1_740_000_000)
        #expect(epoch.endSeconds == 1_740_000_600)
        #expect(Epoch(containing: Double(epoch.endSeconds) - 0.001, length: 600) == epoch)
        #expect(Epoch(containing: Double(epoch.endSeconds), length: 600) == epoch.advanced(by: 1))
        #expect(Epoch(index: 5, length: 1).startSeconds == 5)
        #expect(Epoch.defaultLength == 600)
    }

    @Test("Out-of-range times clamp instead of trapping")
    func clamping() {
        #expect(Epoch(containing: -5.0).index == 0)
        #expect(Epoch(containing: Double.nan).index == 0)
        #expect(Epoch(containing: -Double.infinity).index == 0)
        #expect(Epoch(containing: Double.infinity, length: 1).index == UInt64.max)
        #expect(Epoch(containing: 1e300, length: 600).index == UInt64.max / 600)
        let last = Epoch(index: .max, length: 600)
        #expect(last.startSeconds == .max)
        #expect(last.endSeconds == .max)
        #expect(last.advanced(by: 1) == last)
        #expect(Epoch(index: 0).advanced(by: -1).index == 0)
    }

    @Test("Advancing and distance")
    func arithmetic() {
        let epoch = Epoch(index: 100, length: 60)
        #expect(epoch.advanced(by: -3).index == 97)
        #expect(epoch.advanced(by: 3).index == 103)
        #expect(epoch.distance(to: epoch.advanced(by: 7)) == 7)
        #expect(epoch.distance(to: epoch.advanced(by: -7)) == -7)
        #expect(Epoch(index: 0).distance(to: Epoch(index: .max)) == .max)
        #expect(Epoch(index: .max).distance(to: Epoch(index: 0)) == .min)
    }

    @Test("The context binds length and index, big-endian")
    func context() {
        #expect(Hex.encode(Epoch(index: 2_900_000, length: 600).context.bytes) == "0000025800000000002c4020")
        #expect(Epoch(index: 1, length: 600).context != Epoch(index: 1, length: 60).context)
        #expect(Hex.encode(Epoch(index: 1 << 40 | 5, length: 86_400).context.bytes) == "0001518000000100" + "00000005")
    }
}
