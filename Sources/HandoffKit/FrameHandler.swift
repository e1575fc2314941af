import Foundation
import HandoffProtocol
import NIOCore

/// Splits the daemon's byte stream into lines and hands each to the connection state.
///
/// Lives on the channel's event loop, like every channel handler.
final class FrameHandler: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    /// The longest line accepted from the daemon. Responses may be longer than
    /// the request limit (a `list` of many activities), so this is generous.
    static let maximumIncomingLineLength = 4 * 1024 * 1024

    private let state: ConnectionState
    private var lines = LineBuffer(maximumLength: FrameHandler.maximumIncomingLineLength)

    init(state: ConnectionState) {
        self.state = state
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let buffer = unwrapInboundIn(data)
        for item in lines.append(buffer.readableBytesView) {
            switch item {
            case .line(let bytes):
                state.receive(Data(bytes))
            case .tooLong:
                state.receivedOverlongLine(limit: Self.maximumIncomingLineLength)
                context.close(promise: nil)
                return
            }
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        state.closed(because: .connectionClosed)
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        state.closed(because: .connectionClosed)
        context.close(promise: nil)
    }
}
