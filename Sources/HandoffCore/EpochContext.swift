/// The epoch's 12-byte context as three big-endian words (see `Epoch.context`).
struct EpochContext: Sendable, Equatable {
    let length: UInt32
    let indexHigh: UInt32
    let indexLow: UInt32

    /// The 12 bytes.
    var bytes: [UInt8] {
        [length, indexHigh, indexLow].flatMap { word in
            [UInt8(truncatingIfNeeded: word >> 24), UInt8(truncatingIfNeeded: word >> 16),
             UInt8(truncatingIfNeeded: word >> 8), UInt8(truncatingIfNeeded: word)]
        }
    }
}
