import HandoffCore
import NIOCore
import Synchronization

extension StreamRelay {
    /// What the app-to-link half ended with, and the sealer as it left it.
    private struct Upstream: Sendable {
        var sealer: StreamSealer
        /// nil: the app closed its output and the end frame went.
        var failure: StreamRelayError?
    }

    /// After the handshake: app bytes to the link (a child task, which owns the sealer) and link frames to
    /// the app (this task, which owns the opener), until both directions ended or one failed.
    func relay(
        early: [StreamFrame], linkFrames: inout NIOAsyncChannelInboundStream<ByteBuffer>.AsyncIterator,
        opener: inout StreamOpener, sealer: StreamSealer, send: @escaping @Sendable ([UInt8]) async throws -> Void,
        appInbound: NIOAsyncChannelInboundStream<ByteBuffer>, appChannel: any Channel,
        activity: ActivityClock, link: StreamChannelIO
    ) async -> Outcome {
        let linkChannel = link.channel.channel
        // Idle: stop reading the link (its input closes, the read below ends), so the abort can still go out.
        let idle = activity.watch(idleTimeout) { linkChannel.close(mode: .input, promise: nil) }
        defer { idle.cancel() }
        let upstream = Task { () -> Upstream in
            var sealer = sealer
            do {
                for try await buffer in appInbound where buffer.readableBytes > 0 {
                    activity.touch()
                    // Each frame in an SDU of its own, so that the peer can put SDUs its kernel reordered back
                    // in order (docs/continuation.md 10.5).
                    let frames = try sealer.sealFrames(buffer.readableBytesView, maximumFrameLength: link.sendUnit)
                    do {
                        for frame in frames { try await send(frame) }
                    } catch {
                        // The link failed: the other half sees it too (truncated), and reports it.
                        return Upstream(sealer: sealer, failure: .stream(.truncated))
                    }
                }
            } catch is StreamError {
                return Upstream(sealer: sealer, failure: .stream(.closed))
            } catch {
                // Stopped by the other half's failure: it sends the abort.
                if Task.isCancelled { return Upstream(sealer: sealer, failure: nil) }
                // The app's socket failed: tell the peer this side gave up.
                if let abort = try? sealer.abort(.cancelled) { try? await send(abort) }
                linkChannel.close(promise: nil)
                return Upstream(sealer: sealer, failure: .appGone)
            }
            if Task.isCancelled { return Upstream(sealer: sealer, failure: nil) }
            do { try await send(try sealer.end()) } catch { return Upstream(sealer: sealer, failure: .stream(.truncated)) }
            return Upstream(sealer: sealer, failure: nil)
        }

        // Link to app.
        var failure: StreamRelayError?
        do {
            var pending = early
            var ended = false
            while !ended {
                for frame in pending {
                    switch frame {
                    case .hello: break
                    case .data(let bytes):
                        // Awaited until written to the app's socket: back-pressure, and nothing left in NIO's
                        // buffers when the channel closes.
                        do { try await appChannel.writeAndFlush(ByteBuffer(bytes: bytes)) } catch {
                            throw StreamRelayError.appGone
                        }
                    case .end:
                        try? await appChannel.close(mode: .output)
                        ended = true
                    }
                }
                pending = []
                if ended { break }
                guard let buffer = try await linkFrames.next() else {
                    try opener.finish()
                    break
                }
                activity.touch()
                pending += try opener.receive(unit: buffer.readableBytesView)
            }
        } catch let error as StreamRelayError {
            failure = error
        } catch let error as StreamError {
            failure = .stream(error)
        } catch {
            failure = .stream(.truncated)
        }
        if activity.isIdle { failure = .idleTimedOut }
        if opener.framesReordered > 0 { reordered?(opener.framesReordered) }

        if let failure {
            // Stop the other half; it may be blocked writing to a peer that reads nothing, so the link closes
            // after a grace period whatever happens.
            upstream.cancel()
            let closer = Task {
                try await Task.sleep(for: .seconds(2))
                linkChannel.close(promise: nil)
            }
            defer { closer.cancel() }
            var up = await upstream.value
            let reason: StreamAbortReason? = switch failure {
            case .stream(let error): error.abortReason
            case .appGone, .idleTimedOut, .handshakeTimedOut: .cancelled
            }
            if let reason, !up.sealer.isClosed, let abort = try? up.sealer.abort(reason) { try? await send(abort) }
            return .failed(up.failure == .appGone ? .appGone : failure)
        }
        let up = await upstream.value
        if activity.isIdle { return .failed(.idleTimedOut) }
        if let upFailure = up.failure { return .failed(upFailure) }
        return .finished
    }
}

/// When bytes last crossed a relay, and the idle watchdog.
final class ActivityClock: Sendable {
    private let state = Mutex((last: ContinuousClock.now, idle: false))

    func touch() { state.withLock { $0.last = .now } }

    var isIdle: Bool { state.withLock { $0.idle } }

    /// A task that calls `expire` once nothing crossed for `limit` (and marks the clock idle).
    func watch(_ limit: Duration, expire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task {
            while !Task.isCancelled {
                let deadline = state.withLock { $0.last } + limit
                do { try await Task.sleep(until: deadline) } catch { return }
                let expired = state.withLock { state -> Bool in
                    guard ContinuousClock.now - state.last >= limit else { return false }
                    state.idle = true
                    return true
                }
                if expired {
                    expire()
                    return
                }
            }
        }
    }
}
