import HandoffKit

/// Reads a continuation stream's bytes as the example's exchange needs them: lines, then bodies of a
/// given length, across however the bytes were cut into chunks.
struct StreamReader {
    private var iterator: ContinuationStreams.Inbound.AsyncIterator
    private var buffer: [UInt8] = []
    /// A slow reader: this long a pause after each 64 KiB of a body (none when zero).
    private let pause: Duration

    init(_ streams: ContinuationStreams, pause: Duration = .zero) {
        iterator = streams.inbound.makeAsyncIterator()
        self.pause = pause
    }

    /// The next line, without its newline; nil when the other side finished between lines.
    /// - Throws: `DocumentError` for a line over `limit` bytes or a stream that ends inside a line.
    mutating func line(limit: Int = 256) async throws -> String? {
        while true {
            if let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            guard buffer.count <= limit else { throw DocumentError(description: "a line longer than \(limit) bytes") }
            guard let chunk = try await iterator.next() else {
                if buffer.isEmpty { return nil }
                throw DocumentError(description: "the stream ended inside a line")
            }
            buffer += chunk
        }
    }

    /// Exactly `count` bytes.
    /// - Throws: `DocumentError` when the stream ends before them: a cut, told apart from a clean end
    ///   by the length the other side announced.
    mutating func bytes(_ count: Int) async throws -> [UInt8] {
        var body = [UInt8]()
        body.reserveCapacity(count)
        let taken = min(count, buffer.count)
        body += buffer[..<taken]
        buffer.removeFirst(taken)
        var paused = body.count
        while body.count < count {
            if pause > .zero, body.count - paused >= 65_536 {
                try await Task.sleep(for: pause)
                paused = body.count
            }
            guard let chunk = try await iterator.next() else {
                throw DocumentError(description: "the stream ended after \(body.count) of \(count) bytes")
            }
            let wanted = count - body.count
            body += chunk.prefix(wanted)
            if chunk.count > wanted { buffer += chunk.dropFirst(wanted) }
        }
        return body
    }
}
