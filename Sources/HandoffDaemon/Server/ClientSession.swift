import Foundation
import HandoffCore
import HandoffProtocol

/// One connected client, as the daemon core sees it.
struct ClientSession: Sendable {
    let id: UInt64
    let uid: UInt32
    let pid: Int32
    /// Frames to this client, in order; the connection drains it.
    let outbox: Outbox
    var app: String?
    var version: Int?
    var handles: Set<ActivityType> = []
    var subscribed = false
    var subscribedTypes: Set<String>?

    var description: String { "client \(id) (\(app ?? "no hello yet"), uid \(uid), pid \(pid))" }
}

/// The ordered, bounded queue of frames for one connection.
///
/// Responses and events both go through it, so a client sees them in the
/// order the daemon produced them. If a client stops reading and the queue
/// fills, the connection is closed instead of letting memory grow.
final class Outbox: Sendable {
    let frames: AsyncStream<Data>
    private let continuation: AsyncStream<Data>.Continuation

    init(capacity: Int) {
        (frames, continuation) = AsyncStream<Data>.makeStream(bufferingPolicy: .bufferingOldest(capacity))
    }

    /// Queues a frame. Returns false when the queue is full (the client is too slow).
    @discardableResult
    func send(_ frame: Data) -> Bool {
        switch continuation.yield(frame) {
        case .enqueued: return true
        case .dropped, .terminated: return false
        @unknown default: return false
        }
    }

    func close() { continuation.finish() }
}
