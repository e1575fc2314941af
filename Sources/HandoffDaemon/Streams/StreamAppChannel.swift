import NIOCore
import NIOPosix

/// The daemon's end of an app's byte stream: a connected `AF_UNIX` `SOCK_STREAM` socket (how it reaches the
/// app is the socket protocol's business), driven by SwiftNIO with half-closure both ways: the app's
/// `shutdown(SHUT_WR)` is the end of its direction, and the peer's end frame shuts this socket's write side.
enum StreamAppChannel {
    /// Bytes buffered between NIO and the relay, in reads, before NIO stops reading the app's socket.
    static let bufferedReads = 4

    /// Takes `descriptor`: NIO closes it with the channel (on a throw the caller still owns it).
    static func open(descriptor: CInt, group: any EventLoopGroup) async throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer> {
        try await ClientBootstrap(group: group)
                .channelOption(.allowRemoteHalfClosure, value: true)
                .withConnectedSocket(descriptor) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                            wrappingChannelSynchronously: channel,
                            configuration: .init(
                                backPressureStrategy: .init(lowWatermark: 1, highWatermark: bufferedReads),
                                isOutboundHalfClosureEnabled: true))
                    }
                }
    }
}
