/// A rotation epoch: the span of time during which a device's recognition
/// tag, slot and device identifier stay the same.
///
/// Epoch `index` covers the seconds `[index * length, (index + 1) * length)`
/// since the Unix epoch. Time is always a parameter: nothing here reads a clock.
public struct Epoch: Hashable, Sendable, CustomStringConvertible {
    /// The default epoch length: 10 minutes.
    public static let defaultLength: UInt32 = 600

    /// Number of whole epochs since the Unix epoch.
    public let index: UInt64
    /// Length of every epoch, in seconds (at least 1).
    public let length: UInt32

    /// The epoch with the given index.
    /// - Precondition: `length > 0`.
    public init(index: UInt64, length: UInt32 = Epoch.defaultLength) {
        precondition(length > 0, "epoch length must be at least one second")
        self.index = index
        self.length = length
    }

    /// The epoch containing `seconds` since the Unix epoch. Negative and NaN
    /// times count as 0; times past the representable range saturate.
    public init(containing seconds: Double, length: UInt32 = Epoch.defaultLength) {
        let whole: UInt64
        if !(seconds > 0) {
            whole = 0
        } else if seconds >= 18_446_744_073_709_549_568 {  // largest Double below 2^64
            whole = .max
        } else {
            whole = UInt64(seconds)
        }
        self.init(containing: whole, length: length)
    }

    /// The epoch containing `seconds` since the Unix epoch.
    public init(containing seconds: UInt64, length: UInt32 = Epoch.defaultLength) {
        precondition(length > 0, "epoch length must be at least one second")
        self.init(index: seconds / UInt64(length), length: length)
    }

    /// First second of the epoch (saturating).
    public var startSeconds: UInt64 {
        let (product, overflow) = index.multipliedReportingOverflow(by: UInt64(length))
        return overflow ? .max : product
    }

    /// First second after the epoch (saturating).
    public var endSeconds: UInt64 {
        let (sum, overflow) = startSeconds.addingReportingOverflow(UInt64(length))
        return overflow ? .max : sum
    }

    /// The epoch `offset` epochs later (earlier if negative), saturating at
    /// the first and last representable epochs.
    public func advanced(by offset: Int64) -> Epoch {
        if offset >= 0 {
            let (sum, overflow) = index.addingReportingOverflow(UInt64(offset))
            return Epoch(index: overflow ? .max : sum, length: length)
        }
        let magnitude = offset.magnitude
        return Epoch(index: index >= magnitude ? index - magnitude : 0, length: length)
    }

    /// `other.index - index`, clamped to `Int64`. Both epochs must have the same length.
    public func distance(to other: Epoch) -> Int64 {
        precondition(length == other.length, "epochs of different lengths")
        if other.index >= index {
            return Int64(clamping: other.index - index)
        }
        let back = index - other.index
        return back > UInt64(Int64.max) ? .min : -Int64(back)
    }

    /// `epoch 2893421 (600 s)`.
    public var description: String { "epoch \(index) (\(length) s)" }

    /// The 12 bytes that bind beacon cryptography to this epoch:
    /// `length` as 4 big-endian bytes, then `index` as 8 big-endian bytes.
    var context: EpochContext {
        EpochContext(
            length: length, indexHigh: UInt32(truncatingIfNeeded: index >> 32),
            indexLow: UInt32(truncatingIfNeeded: index)
        )
    }
}
