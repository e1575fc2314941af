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

    /// Relays until both directions ended or one failed; closes both channels.
    ///
    /// - Parameter claim: on the origin, called once the peer's hello opened: true takes the offer (the
    ///   first good hello uses it), false refuses this channel. Not called on the continuing side.
    func run(
        link: StreamChannelIO, app: NIOAsyncChannel<ByteBuffer, ByteBuffer>, claim: @Sendable () -> Bool = { true }
    ) async -> Outcome {
        let activity = ActivityClock()
        let outcome: Outcome
        do {
            outcome = try await link.channel.executeThenClose { linkInbound, _ in
                try await app.executeThenClose { appInbound, _ in
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
                    switch hello {
                    case .failure(let error):
                        return role == .origin ? .refused(error) : .failed(error)
                    case .success(let early):
                        if role == .origin {
                            guard claim() else { return .refused(.stream(.handshakeFailed)) }
                            try? await send(try sealer.hello())
                        }
                        return await relay(
                            early: early, linkFrames: &linkFrames, opener: &opener, sealer: sealer, send: send,
                            appInbound: appInbound, appChannel: app.channel, activity: activity, link: link)
                    }
                }
            }
        } catch {
            outcome = .failed(.appGone)
        }
        return outcome
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
                opener.append(buffer.readableBytesView)
                var received: [StreamFrame] = []
                while let frame = try opener.next() { received.append(frame) }
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
