import NIOCore
import NIOPosix

/// A `StreamTransportChannel` driven by SwiftNIO (`NIOPipeBootstrap`, which takes the descriptor's ownership):
/// reads come as one `ByteBuffer` per SDU, with back-pressure (NIO stops reading once `bufferedSDUs` wait for
/// the consumer, so the peer's writes block in its flow control). It reads that far ahead on purpose: the
/// kernel's own receive queue must not fill, as Linux 6.1 then loses or reorders SDUs (docs/continuation.md
/// 10.6, "Linux 6.1 and a slow reader"), and a consumer that writes to a slow app falls behind the link
/// for a while; here each waiting SDU costs its own size (`SDUCompactor`). `send` cuts bytes into SDUs of at most
/// `sendUnit` and writes them one at a time, each after the previous one was written, so that NIO never
/// gathers two into one `writev` (one record on a `SOCK_SEQPACKET` socket, which L2CAP would refuse as over
/// its MTU).
struct StreamChannelIO: Sendable {
    /// Every read gets a buffer this large, more than the largest L2CAP SDU (65535), so a record is never
    /// truncated (a `SOCK_SEQPACKET` read into a smaller buffer drops the rest of the record).
    static let receiveBufferSize = 65_536
    /// SDUs buffered between NIO and the consumer before NIO stops reading: 256 frames of at most 2048
    /// bytes, 512 KiB a stream at most.
    static let bufferedSDUs = 256

    let sendUnit: Int
    let channel: NIOAsyncChannel<ByteBuffer, ByteBuffer>

    /// Hands `transport`'s descriptor to NIO, which closes it with the channel; on failure it is closed here.
    static func open(_ transport: StreamTransportChannel, group: any EventLoopGroup) async throws -> StreamChannelIO {
        let descriptor = transport.descriptor.rawValue
        do {
            let channel = try await NIOPipeBootstrap(group: group)
                .channelOption(.recvAllocator, value: FixedSizeRecvByteBufferAllocator(capacity: receiveBufferSize))
                .channelOption(.maxMessagesPerRead, value: 1)
                .takingOwnershipOfDescriptor(inputOutput: descriptor) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(SDUCompactor())
                        return try NIOAsyncChannel<ByteBuffer, ByteBuffer>(
                            wrappingChannelSynchronously: channel,
                            configuration: .init(
                                backPressureStrategy: .init(lowWatermark: 1, highWatermark: bufferedSDUs)))
                    }
                }
            return StreamChannelIO(sendUnit: transport.sendUnit, channel: channel)
        } catch {
            try? transport.descriptor.close()
            throw error
        }
    }

    /// Writes `bytes` as SDUs of at most `sendUnit` bytes, in order; returns when the last is written to
    /// the socket (so a slow peer slows the caller). Nothing is written for no bytes.
    static func send(_ bytes: [UInt8], sendUnit: Int, on channel: any Channel) async throws {
        var start = 0
        while start < bytes.count {
            let end = min(bytes.count, start + sendUnit)
            let buffer = channel.allocator.buffer(bytes: bytes[start..<end])
            try await channel.writeAndFlush(buffer)
            start = end
        }
    }
}
