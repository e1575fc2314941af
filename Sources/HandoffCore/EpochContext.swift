/// The epoch's 12-byte context as three big-endian words (see `Epoch.context`).
struct EpochContext: Sendable, Equatable {
    /// Length of the context in bytes.
    static let byteCount = 12

    let length: UInt32
    let indexHigh: UInt32
    let indexLow: UInt32

    /// Writes the 12 bytes to `pointer` (no alignment needed).
    @inline(__always)
    func write(to pointer: UnsafeMutableRawPointer) {
        pointer.storeBytes(of: length.bigEndian, toByteOffset: 0, as: UInt32.self)
        pointer.storeBytes(of: indexHigh.bigEndian, toByteOffset: 4, as: UInt32.self)
        pointer.storeBytes(of: indexLow.bigEndian, toByteOffset: 8, as: UInt32.self)
    }

    /// The 12 bytes.
    var bytes: [UInt8] {
        [UInt8](unsafeUninitializedCapacity: Self.byteCount) { buffer, count in
            write(to: UnsafeMutableRawPointer(buffer.baseAddress!))
            count = Self.byteCount
        }
    }
}
