import HandoffCore
import NIOCore
import NIOPosix
import Synchronization

/// The origin's side of one stream offer (docs/continuation.md, sections 10.2 and 10.6): accepts channels on
/// the offer's listener for at most `lifetime`, runs each one's handshake at once (so a stranger holding a
/// channel open delays nobody), and relays the first that passes it; the listener closes when that hello
/// took the offer, when the lifetime ends, or when the stream is cancelled.
struct StreamOfferServer: Sendable {
    /// How long an offer waits for the continuing device's channel.
    static let lifetime: Duration = .seconds(30)

    let listener: any StreamTransportListener
    let relay: StreamRelay
    let handle: StreamHandle
    var lifetime = Self.lifetime
    var group: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton

    /// The relay's outcome, or nil when no channel took the offer in time (or it was cancelled first).
    /// `refused` tells of each refused channel (for the log). `app` is the relay's app provider.
    func run(app: @escaping StreamRelay.AppProvider, refused: @escaping @Sendable (StreamRelayError) -> Void)
        async -> StreamRelay.Outcome?
    {
        let listener = listener
        handle.register { listener.close() }
        let claimed = Mutex(false)
        let claim: @Sendable () -> Bool = {
            let first = claimed.withLock { taken in
                defer { taken = true }
                return !taken
            }
            // Used: no other channel for it (a recorded hello replayed on a new channel is refused).
            if first { listener.close() }
            return first
        }
        let expiry = Task { [lifetime] in
            try await Task.sleep(for: lifetime)
            if !claimed.withLock({ $0 }) { listener.close() }
        }
        defer { expiry.cancel() }
        return await withTaskGroup(of: StreamRelay.Outcome?.self) { tasks in
            while let channel = try? await listener.accept() {
                tasks.addTask { [relay, handle, group] in
                    guard let link = try? await StreamChannelIO.open(channel, group: group) else { return nil }
                    handle.register(link.channel.channel)
                    let outcome = await relay.run(link: link, app: app, claim: claim)
                    if case .refused(let error) = outcome {
                        refused(error)
                        return nil
                    }
                    return outcome
                }
            }
            expiry.cancel()
            var result: StreamRelay.Outcome?
            for await outcome in tasks where outcome != nil { result = outcome }
            return result
        }
    }
}
