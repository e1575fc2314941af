import Foundation
import NIOCore
import NIOPosix

/// A two-way byte stream between the app that continued an activity and the app that published
/// it, over the LE link between the two laptops (NSUserActivity's continuation streams, without
/// the Foundation stream classes): the continuing side gets it from
/// `HandoffClient.continueWithStreams(_:)`, the origin from `UserActivity.incomingStreams`.
///
/// ```swift
/// let (restored, streams) = try await client.continueWithStreams(nearby)
/// try await streams.write(Array("GET chapter-3\n".utf8))
/// for try await chunk in streams.inbound { document.append(contentsOf: chunk) }
/// await streams.close()
/// ```
///
/// Bytes arrive in order, authenticated, in chunks of any size (how the sender cut its writes is not
/// kept); each direction ends on its own: `finish()` ends this side's output and the other app's
/// `inbound` ends, while this side goes on reading. A stream that fails (the link breaks, an idle
/// minute, the other app gives up) is closed by handoffd: `inbound` throws
/// `HandoffClientError.streamBroken` or ends early, and so apps that must tell a cut from a clean end
/// say how many bytes they send, as the example reader does. handoffd ends a stream with no byte in
/// either direction for 60 s.
///
/// The stream is the app's end of a Unix socket that handoffd named (docs/protocol.md, "Continuation
/// streams"); dropping the last reference to it closes it.
public final class ContinuationStreams: Sendable {
    /// The device at the other end, as a per-epoch identifier (8 hex digits): on the origin the
    /// continuing device (`streamOpened`'s `byDevice`), on the continuing side the origin device
    /// (`ContinuedActivity.device`).
    public let peerDevice: String
    /// The bytes the other app writes, in order, as they arrive. It ends when the other app called
    /// `finish()` (or the stream ended early, see above) and throws `HandoffClientError.streamBroken`
    /// on a failure. One consumer: iterate it from one task, once.
    public let inbound: Inbound

    private let channel: any Channel
    private let outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>

    private init(
        peerDevice: String, channel: any Channel, inbound: NIOAsyncChannelInboundStream<ByteBuffer>,
        outbound: NIOAsyncChannelOutboundWriter<ByteBuffer>
    ) {
        self.peerDevice = peerDevice
        self.channel = channel
        self.inbound = Inbound(base: inbound)
        self.outbound = outbound
    }

    deinit {
        outbound.finish()
        channel.close(promise: nil)
    }

    /// Picks up the app's end of a stream at `path`, which handoffd named in `continued` (`stream.path`) or
    /// `streamOpened`, for apps that speak the protocol through `HandoffConnection` themselves
    /// (`HandoffClient` and `UserActivity` do this on their own).
    /// - Throws: `HandoffClientError.streamConnectFailed`.
    public static func connect(
        path: String, peerDevice: String, eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton
    ) async throws -> ContinuationStreams {
        let asyncChannel: NIOAsyncChannel<ByteBuffer, ByteBuffer>
        do {
            asyncChannel = try await ClientBootstrap(group: eventLoopGroup)
                .connectTimeout(.seconds(5))
                .channelOption(.allowRemoteHalfClosure, value: true)
                .connect(unixDomainSocketPath: path) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                            wrappingChannelSynchronously: channel,
                            configuration: .init(isOutboundHalfClosureEnabled: true))
                    }
                }
        } catch {
            throw HandoffClientError.streamConnectFailed(path, reason: Self.describe(error))
        }
        // The channel's halves live as long as the channel: the scoped call ends when it closes
        // (both directions done, `close()`, or this object's deinit).
        let (halves, handOver) = AsyncStream.makeStream(
            of: (NIOAsyncChannelInboundStream<ByteBuffer>, NIOAsyncChannelOutboundWriter<ByteBuffer>).self)
        let channel = asyncChannel.channel
        Task {
            try? await asyncChannel.executeThenClose { inbound, outbound in
                handOver.yield((inbound, outbound))
                handOver.finish()
                try await channel.closeFuture.get()
            }
        }
        var iterator = halves.makeAsyncIterator()
        guard let (inbound, outbound) = await iterator.next() else {
            throw HandoffClientError.streamConnectFailed(path, reason: "the connection closed at once")
        }
        return ContinuationStreams(peerDevice: peerDevice, channel: channel, inbound: inbound, outbound: outbound)
    }

    /// Sends `bytes` to the other app, in order after what was written before. Returns once the
    /// bytes are queued within the socket's limits: a writer faster than the link (or than the other
    /// app reads) waits here, so the memory in between stays bounded.
    /// - Throws: `HandoffClientError.streamBroken` when the stream failed, or after `finish()` or `close()`.
    public func write(_ bytes: some Sequence<UInt8>) async throws {
        let buffer = channel.allocator.buffer(bytes: bytes)
        guard buffer.readableBytes > 0 else { return }
        do {
            try await outbound.write(buffer)
        } catch {
            throw HandoffClientError.streamBroken(Self.describe(error))
        }
    }

    /// Ends this side's output (`shutdown(SHUT_WR)` after what was written): the other app's
    /// `inbound` ends cleanly; this side's `inbound` goes on until the other app finishes too.
    public func finish() async {
        outbound.finish()
    }

    /// Closes both directions at once. Unless both apps had finished, the other side sees the
    /// stream end early.
    public func close() async {
        outbound.finish()
        try? await channel.close()
    }

    static func describe(_ error: any Error) -> String {
        if let error = error as? IOError { return String(cString: strerror(error.errnoCode)) }
        if let error = error as? NIOConnectionError, let first = error.connectionErrors.first?.error {
            return describe(first)
        }
        if error is NIOAsyncWriterError { return "this side already finished writing, or closed the stream" }
        if let error = error as? ChannelError {
            switch error {
            case .ioOnClosedChannel, .alreadyClosed, .outputClosed: return "the stream is closed"
            case .connectTimeout: return "connecting timed out"
            default: break
            }
        }
        return String(describing: error)
    }
}
