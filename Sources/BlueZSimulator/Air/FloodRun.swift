/// A running `StartFlood`.
struct FloodRun {
    let adapter: String
    var devices: [DeviceAddress]
    let task: Task<Void, Never>
    let generation: UInt64
    /// Every report was sent.
    var finished = false
}
