/// Which way a radio listens for beacons (`RadioStatus.scanPath`).
public enum ScanPath: String, Sendable, Equatable {
    /// Not listening yet.
    case none
    /// A passive advertisement monitor: bluetoothd delivers only advertisements
    /// that match its patterns (`LERadio+Monitor.swift`).
    case monitor
    /// Discovery with our filter (LE, DuplicateData): bluetoothd delivers every advertisement.
    case discovery
}
