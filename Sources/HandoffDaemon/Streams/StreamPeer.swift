/// The other laptop of a continuation stream, as the continuing side's bluetoothd knows it.
struct StreamPeer: Sendable, Hashable, CustomStringConvertible {
    /// This laptop's adapter that ran the continuation exchange.
    let adapterAddress: String
    /// The origin's address (`Device1.Address`).
    let address: String
    /// `"public"` or `"random"`, as `Device1.AddressType`.
    let addressType: String

    var description: String { "\(address) (\(addressType)) via \(adapterAddress)" }
}
