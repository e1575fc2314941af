/// The seam between the daemons' stream relays and the link that carries a continuation stream
/// (docs/continuation.md, section 10.6): an LE L2CAP connection-oriented channel on real Bluetooth,
/// `LocalStreamTransport` over the simulator.
///
/// It is descriptor-based, so the real L2CAP code plugs in without changing the relays: a channel is a
/// connected `SOCK_SEQPACKET` descriptor on which each `write` is one SDU of at most `sendUnit` bytes and
/// each `read` returns one SDU (the frame decoder accepts frames cut anywhere).
protocol StreamTransport: Sendable {
    /// Listens on a fresh dynamic LE PSM (0x0080…0x00FF) on this laptop's adapter.
    /// - Throws: `StreamTransportError.noFreePSM` when every PSM of the range is taken.
    func listen() async throws -> any StreamTransportListener
    /// Opens a channel to the device the continuation used, on `psm`.
    func connect(to peer: StreamPeer, psm: UInt16, timeout: Duration) async throws -> StreamTransportChannel
}

/// A listening PSM; one per stream offer.
protocol StreamTransportListener: Sendable {
    var psm: UInt16 { get }
    /// The next incoming channel. Throws `StreamTransportError.closed` once `close()` was called.
    func accept() async throws -> StreamTransportChannel
    /// Stops listening: the PSM is free again, and pending and later `accept()`s throw.
    func close()
}
