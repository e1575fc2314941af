import Synchronization
import Testing

@testable import BlueZ

/// The owner's actor in these tests: passes and the stop run on it, as in `LERadio`.
private actor Owner {
    let reconciler = Reconciler()
    var passes = 0
    var log: [String] = []
    /// The first pass waits here until the test lets it go (a registration awaiting bluetoothd's reply).
    private var gate: CheckedContinuation<Void, Never>?
    private var inPass: CheckedContinuation<Void, Never>?

    func reconcile() async {
        await reconciler.reconcile(retry: {}, pass: { await self.pass() }, failed: { _ in })
    }

    private func pass() async {
        passes += 1
        log.append("pass \(passes) begins")
        if passes == 1 {
            await withCheckedContinuation { gate = $0; inPass?.resume(); inPass = nil }
        }
        log.append("pass \(passes) ends")
    }

    /// Returns once the first pass is suspended.
    func waitForPass() async {
        if gate != nil { return }
        await withCheckedContinuation { inPass = $0 }
    }

    func release() { gate?.resume(); gate = nil }

    func stop() async {
        await reconciler.stopAfterPass()
        log.append("stopped")
    }
}

@Suite struct ReconcilerTests {
    @Test func stopAfterPassWaitsForThePassUnderWay() async {
        let owner = Owner()
        let first = Task { await owner.reconcile() }
        await owner.waitForPass()
        let stopping = Task { await owner.stop() }
        // The stop is under way, and must not have returned while the pass is suspended.
        for _ in 0..<20 { await Task.yield() }
        #expect(await owner.log == ["pass 1 begins"])
        await owner.release()
        await stopping.value
        await first.value
        #expect(await owner.log == ["pass 1 begins", "pass 1 ends", "stopped"])
    }

    @Test func stopAfterPassReturnsAtOnceWhenIdleAndNoPassRunsAfterIt() async {
        let owner = Owner()
        await owner.stop()
        await owner.reconcile()
        #expect(await owner.log == ["stopped"])
        #expect(owner.reconciler.isStopped)
    }

    @Test func aRequestDuringTheLastPassIsDroppedOnceStopped() async {
        let owner = Owner()
        let first = Task { await owner.reconcile() }
        await owner.waitForPass()
        // Asks for one more pass while the first runs, then stops: the extra pass never runs.
        await owner.reconcile()
        let stopping = Task { await owner.stop() }
        for _ in 0..<20 { await Task.yield() }
        await owner.release()
        await stopping.value
        await first.value
        #expect(await owner.passes == 1)
    }
}
