import NIOCore

/// Copies each SDU read from an L2CAP channel out of NIO's receive buffer (65,536 bytes, larger than any
/// record) into one of its own size, so that the SDUs `StreamChannelIO` reads ahead of a slow consumer hold
/// about 2 KiB each, not 64.
final class SDUCompactor: ChannelInboundHandler, Sendable {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let record = unwrapInboundIn(data)
        context.fireChannelRead(wrapInboundOut(context.channel.allocator.buffer(bytes: record.readableBytesView)))
    }
}
