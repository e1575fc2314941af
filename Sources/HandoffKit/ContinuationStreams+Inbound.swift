import NIOCore

extension ContinuationStreams {
    /// The bytes the other app writes, as chunks of `[UInt8]` in order (`ContinuationStreams.inbound`).
    public struct Inbound: AsyncSequence, Sendable {
        public typealias Element = [UInt8]
        public typealias Failure = any Error

        let base: NIOAsyncChannelInboundStream<ByteBuffer>

        public func makeAsyncIterator() -> AsyncIterator {
            AsyncIterator(base: base.makeAsyncIterator())
        }

        /// Reads every byte until the other app finishes, and returns them.
        /// - Parameter limit: the most bytes to take; more fails with `HandoffClientError.streamBroken`.
        public func collect(upTo limit: Int) async throws -> [UInt8] {
            var bytes: [UInt8] = []
            for try await chunk in self {
                guard bytes.count + chunk.count <= limit else {
                    throw HandoffClientError.streamBroken("more than \(limit) bytes arrived")
                }
                bytes += chunk
            }
            return bytes
        }

        public struct AsyncIterator: AsyncIteratorProtocol {
            var base: NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator

            /// The next chunk, or nil once the other app finished (or the stream ended early).
            /// - Throws: `HandoffClientError.streamBroken` when reading failed.
            public mutating func next() async throws -> [UInt8]? {
                do {
                    guard let buffer = try await base.next() else { return nil }
                    return Array(buffer.readableBytesView)
                } catch {
                    throw HandoffClientError.streamBroken(ContinuationStreams.describe(error))
                }
            }
        }
    }
}
