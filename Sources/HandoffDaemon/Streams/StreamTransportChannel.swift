import SystemPackage

/// One connected channel of a `StreamTransport`: a `SOCK_SEQPACKET` descriptor, owned by whoever holds
/// this value (it must close it, or hand it to `StreamChannelIO`, which does).
struct StreamTransportChannel: Sendable {
    let descriptor: FileDescriptor
    /// The most bytes one `write` may carry (the L2CAP send MTU).
    let sendUnit: Int
}
