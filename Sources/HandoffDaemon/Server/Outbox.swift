import Foundation

/// The ordered, bounded queue of frames for one connection.
///
/// Responses and events both go through it, so a client sees them in the
/// order the daemon produced them. If a client stops reading and the queue
/// fills, the connection is closed instead of letting memory grow.
public final class Outbox: Sendable {
    public let frames: AsyncStream<Data>
    private let input: AsyncStream<Data>.Continuation

    public init(capacity: Int) {
        (frames, input) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingOldest(capacity))
    }

    /// Queues a frame. Returns false when the queue is full (the client is too slow).
    @discardableResult
    public func send(_ frame: Data) -> Bool {
        switch input.yield(frame) {
        case .enqueued: return true
        case .dropped, .terminated: return false
        @unknown default: return false
        }
    }

    public func close() { input.finish() }
}
