import HandoffCore
import NIOCore
import Synchronization

/// Runs one continuation stream on one side (docs/continuation.md, sections 10.6 and 10.7): the link channel
/// (a `StreamChannelIO`) carries sealed frames, the app channel the app's plain bytes. Bytes cross one
/// buffer at a time in each direction, each write awaited, so a slow reader on either side slows the writer
/// on the other and nothing piles up here.
struct StreamRelay: Sendable {
    /// How a relayed stream ended.
    enum Outcome: Sendable, Equatable {
        /// Origin only: the first frame did not open as the peer's hello (or the link closed, or the hello
        /// came too late, or the offer was already used): the link was closed without a byte sent, and the
        /// offer stays unused unless `claim` had taken it.
        case refused(StreamRelayError)
        /// Both directions ended cleanly.
        case finished
        /// The stream failed after the handshake, or on the continuing side at it.
        case failed(StreamRelayError)
    }

    let role: StreamRole
    let keys: StreamKeys
    /// From the start of `run` until the peer's hello opened.
    var handshakeTimeout: Duration = .seconds(5)
    /// No byte in either direction for this long ends the stream (abort `cancelled`).
    var idleTimeout: Duration = .seconds(60)
    /// Told once the relay ended, when frames of the peer came out of order and were put back in order
    /// (docs/continuation.md 10.5): how many were held.
    var reordered: (@Sendable (Int) -> Void)?

    /// Where the relay gets its app's end once the handshake passed: nil when the app did not come (the
    /// stream then ends with an abort `cancelled` to the peer, `appGone`).
    typealias AppProvider = @Sendable () async -> NIOAsyncChannel<ByteBuffer, ByteBuffer>?

    /// Runs the handshake, then takes the app's end from `app` and relays until both directions ended or one
    /// failed; closes the link, and the app's end if it was taken. `app` is called only once the peer's
    /// hello opened (on the origin: once `claim` took the offer and this side's hello went), so a channel
    /// that is refused never costs the app its connection.
    ///
    /// - Parameter claim: on the origin, called once the peer's hello opened: true takes the offer (the
    ///   first good hello uses it), false refuses this channel. Not called on the continuing side.
    func run(link: StreamChannelIO, app: AppProvider, claim: @Sendable () -> Bool = { true }) async -> Outcome {
        let activity = ActivityClock()
        do {
            return try await link.channel.executeThenClose { linkInbound, _ in
                var linkFrames = linkInbound.makeAsyncIterator()
                var opener = keys.opener(for: role)
                var sealer = keys.sealer(for: role)
                let send: @Sendable ([UInt8]) async throws -> Void = { bytes in
                    try await StreamChannelIO.send(bytes, sendUnit: link.sendUnit, on: link.channel.channel)
                    activity.touch()
                }
                // A hello that cannot be written (the link already went) is not fatal here: what arrived
                // is still delivered, and reading then reports the cut (`truncated`).
                if role == .continuing { try? await send(try sealer.hello()) }
                // The handshake: the peer's first frame must open as its hello, in time.
                let hello = await Self.firstFrame(
                    from: &linkFrames, opener: &opener, timeout: handshakeTimeout, channel: link.channel.channel)
                guard case .success(let early) = hello else {
                    guard case .failure(let error) = hello else { return .failed(.stream(.truncated)) }
                    return role == .origin ? .refused(error) : .failed(error)
                }
                if role == .origin {
                    guard claim() else { return .refused(.stream(.handshakeFailed)) }
                    try? await send(try sealer.hello())
                }
                guard let appChannel = await app() else {
                    if let abort = try? sealer.abort(.cancelled) { try? await send(abort) }
                    return .failed(.appGone)
                }
                activity.touch()
                return try await appChannel.executeThenClose { appInbound, _ in
                    await relay(
                        early: early, linkFrames: &linkFrames, opener: &opener, sealer: sealer, send: send,
                        appInbound: appInbound, appChannel: appChannel.channel, activity: activity, link: link)
                }
            }
        } catch {
            return .failed(.appGone)
        }
    }

    /// Reads until the peer's hello opened: `.success` with any frames that came in the same reads after it.
    private static func firstFrame(
        from frames: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator, opener: inout StreamOpener,
        timeout: Duration, channel: any Channel
    ) async -> Result<[StreamFrame], StreamRelayError> {
        // The deadline closes the link, which ends the read below.
        let expired = Mutex(false)
        let timer = Task {
            try await Task.sleep(for: timeout)
            expired.withLock { $0 = true }
            channel.close(promise: nil)
        }
        defer { timer.cancel() }
        var result: Result<[StreamFrame], StreamRelayError>
        do {
            result = .failure(.stream(.truncated))
            while let buffer = try await frames.next() {
                let received = try opener.receive(unit: buffer.readableBytesView)
                if opener.isEstablished {
                    result = .success(Array(received.dropFirst()))
                    break
                }
            }
            if case .failure = result { try opener.finish() }
        } catch let error as StreamError {
            result = .failure(.stream(error))
        } catch {
            result = .failure(.stream(.truncated))
        }
        if case .failure = result, expired.withLock({ $0 }) { return .failure(.handshakeTimedOut) }
        return result
    }
}
