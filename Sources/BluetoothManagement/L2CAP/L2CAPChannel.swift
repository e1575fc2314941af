import SystemPackage

/// A connected LE L2CAP connection-oriented channel: a SOCK_SEQPACKET socket in
/// blocking mode, owned by whoever receives it (close it when done).
///
/// Each write() sends one SDU of at most `sendMTU` bytes (more fails with EMSGSIZE);
/// each read() returns one SDU of at most `receiveMTU` bytes, so read with a buffer of
/// at least `receiveMTU` or the rest of the SDU is lost. A read of 0 bytes is the end:
/// the peer closed the channel or the link dropped.
public struct L2CAPChannel: Sendable {
    public let descriptor: FileDescriptor
    /// The most bytes one write() may carry: the peer's receive MTU (BT_SNDMTU).
    public let sendMTU: Int
    /// The most bytes one read() returns: our receive MTU (BT_RCVMTU).
    public let receiveMTU: Int
    /// The other end, as the kernel names it (for logs; nil if the kernel did not say).
    public let peer: LEAddress?

    /// The receive MTU the listener and the connector ask for unless told otherwise: a whole
    /// stream frame (docs/continuation.md section 10.4: at most 2048 bytes) fits one SDU.
    public static let defaultReceiveMTU = 2048

    public init(descriptor: FileDescriptor, sendMTU: Int, receiveMTU: Int, peer: LEAddress?) {
        self.descriptor = descriptor
        self.sendMTU = sendMTU
        self.receiveMTU = receiveMTU
        self.peer = peer
    }
}
