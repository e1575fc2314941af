import Synchronization

/// What is on the air right now, shared by the simulator and its current
/// bluetoothd. Any thread.
final class AirSettings: Sendable {
    private let state: Mutex<Double>

    init(dropRate: Double) { state = Mutex(dropRate) }

    /// The fraction of reports lost, 0 … 1.
    var dropRate: Double {
        get { state.withLock { $0 } }
        set { state.withLock { $0 = newValue } }
    }
}
