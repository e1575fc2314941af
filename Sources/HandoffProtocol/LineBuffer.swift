/// Splits a byte stream into newline-terminated lines, with a length limit.
///
/// A line longer than the limit is reported once as `.tooLong` and its bytes
/// are skipped up to the next newline, so one oversized request costs its
/// sender an error and nothing else: the lines after it are read as usual.
public struct LineBuffer: Sendable {
    public enum Item: Sendable, Equatable {
        case line([UInt8])
        case tooLong
    }

    public let maximumLength: Int
    private var pending: [UInt8] = []
    private var discarding = false

    public init(maximumLength: Int = ProtocolLimits.maximumLineLength) {
        self.maximumLength = maximumLength
    }

    /// Feeds bytes in; returns the complete lines (without their newline) in order.
    public mutating func append(_ bytes: some Sequence<UInt8>) -> [Item] {
        var items: [Item] = []
        for byte in bytes {
            if byte == UInt8(ascii: "\n") {
                if discarding {
                    discarding = false
                } else {
                    var line = pending
                    if line.last == UInt8(ascii: "\r") { line.removeLast() }
                    if !line.isEmpty { items.append(.line(line)) }
                }
                pending.removeAll(keepingCapacity: true)
            } else if !discarding {
                // A carriage return right after a full-length line is the CR of its CRLF, not content.
                let isTrailingCR = byte == UInt8(ascii: "\r") && pending.count == maximumLength
                if pending.count >= maximumLength && !isTrailingCR {
                    discarding = true
                    pending.removeAll(keepingCapacity: false)
                    items.append(.tooLong)
                } else {
                    pending.append(byte)
                }
            }
        }
        return items
    }

    /// Bytes held for an unfinished line.
    public var bufferedCount: Int { pending.count }
}
