import Synchronization

/// Counters over the simulator's whole life (they survive restarts), read by
/// `GetStats`. Any thread.
final class SimulatorStats: Sendable {
    struct Counters: Sendable {
        var reportsDelivered: UInt64 = 0
        var reportsDropped: UInt64 = 0
        var floodReportsSent: UInt64 = 0
        var advertisementsRegistered: UInt64 = 0
        var advertisementsReleased: UInt64 = 0
        var devicesAdded: UInt64 = 0
        var devicesRemoved: UInt64 = 0
        var restarts: UInt32 = 0
    }

    private let counters = Mutex(Counters())

    func update(_ body: (inout Counters) -> Void) {
        counters.withLock { body(&$0) }
    }

    var snapshot: Counters { counters.withLock { $0 } }
}
