/// Cutting a response into notifications, and putting it back together
/// (docs/continuation.md, section 6): `session(4) ‖ index(2) ‖ count(2) ‖ bytes`.
public enum ResponseChunks {
    /// The chunks of `response` for an ATT MTU of `mtu` (values below 23 count as 23; the
    /// attribute value limit of 512 bytes caps the size).
    /// - Precondition: `response` is at most `ContinuationFormat.maximumResponseLength` bytes.
    public static func split(_ response: [UInt8], session: UInt32, mtu: Int) -> [[UInt8]] {
        precondition(response.count <= ContinuationFormat.maximumResponseLength, "response over the limit")
        let value = min(max(mtu, ContinuationFormat.minimumMTU) - 3, ContinuationFormat.maximumAttributeLength)
        let size = value - ContinuationFormat.chunkHeaderLength
        let count = max(1, (response.count + size - 1) / size)
        return (0..<count).map { index in
            let body = response[min(index * size, response.count)..<min((index + 1) * size, response.count)]
            return PendingContinuation.bigEndian(session)
                + [UInt8(index >> 8), UInt8(truncatingIfNeeded: index), UInt8(count >> 8), UInt8(truncatingIfNeeded: count)]
                + body
        }
    }
}

/// Reassembles one session's chunks on the continuing side.
public struct ChunkAssembler: Sendable {
    public let session: UInt32
    private var count: Int?
    private var parts: [Int: ArraySlice<UInt8>] = [:]
    private var total = 0

    public init(session: UInt32) { self.session = session }

    /// Adds a notification's value. Returns the whole response once every chunk arrived;
    /// nil while some are missing and for chunks of other sessions.
    /// - Throws: `ExchangeError.badChunk` for a chunk that breaks the rules.
    public mutating func add(_ chunk: [UInt8]) throws(ExchangeError) -> [UInt8]? {
        guard chunk.count >= ContinuationFormat.chunkHeaderLength else {
            throw .badChunk("\(chunk.count) bytes, shorter than the header")
        }
        let header = chunk[0..<ContinuationFormat.chunkHeaderLength].map { Int($0) }
        let chunkSession = UInt32(header[0]) << 24 | UInt32(header[1]) << 16 | UInt32(header[2]) << 8 | UInt32(header[3])
        guard chunkSession == session else { return nil }
        let index = header[4] << 8 | header[5]
        let chunkCount = header[6] << 8 | header[7]
        guard chunkCount > 0, index < chunkCount else { throw .badChunk("index \(index) of \(chunkCount)") }
        if let count, count != chunkCount { throw .badChunk("count \(chunkCount) after \(count)") }
        guard parts[index] == nil else { throw .badChunk("chunk \(index) twice") }
        let body = chunk[ContinuationFormat.chunkHeaderLength...]
        total += body.count
        guard total <= ContinuationFormat.maximumResponseLength else {
            throw .badChunk("the response is over \(ContinuationFormat.maximumResponseLength) bytes")
        }
        count = chunkCount
        parts[index] = body
        guard parts.count == chunkCount else { return nil }
        return (0..<chunkCount).flatMap { parts[$0]! }
    }
}
