import NIOCore

/// A connection accepted on one of handoffd's Unix sockets, with its peer's credentials read in the child
/// channel's initializer: before the channel is registered, so before a peer that connects, writes and closes
/// at once can make NIO close the channel (an `EPOLLHUP` closes it once the pending input is read), which would
/// leave nothing to ask `SO_PEERCRED` of.
struct AcceptedConnection: Sendable {
    /// The peer's credentials, or why they could not be read.
    let credentials: Result<PeerCredentials, any Error>
    let connection: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// The child channel initializer's result: the credentials, then `wrap` (which wraps the channel, as
    /// `NIOAsyncChannel(wrappingChannelSynchronously:)` does).
    static func accept(
        _ channel: any Channel, wrap: @escaping @Sendable (any Channel) throws -> NIOAsyncChannel<ByteBuffer, ByteBuffer>
    ) -> EventLoopFuture<AcceptedConnection> {
        PeerCredentials.future(of: channel)
            .map { Result<PeerCredentials, any Error>.success($0) }
            .recover { .failure($0) }
            .flatMapThrowing { AcceptedConnection(credentials: $0, connection: try wrap(channel)) }
    }
}
