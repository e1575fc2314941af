/// What handoffd needs from the system to carry continuation streams (docs/continuation.md, section 10.6):
/// the transport of this laptop's adapter, and a nearby device as a stream peer. `BlueZStreamNetwork` asks
/// bluetoothd's objects; tests of the daemon core may give none (streams are then unavailable).
protocol StreamNetwork: Sendable {
    /// The transport on the adapter in use (`[streams] local_directory` chooses the stand-in).
    /// - Throws: `StreamTransportError` when there is no adapter or its address does not parse.
    func transport() async throws -> any StreamTransport
    /// The peer behind a nearby activity's device (a BlueZ `Device1` path), for connecting.
    /// - Throws: `StreamTransportError` when bluetoothd no longer knows the device.
    func peer(device: String) async throws -> StreamPeer
}
