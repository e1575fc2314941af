extension DaemonSettings {
    /// The transport `[streams] local_directory` selects for the adapter with this identity address
    /// (`Adapter1.Address` and `AddressType`): the local stand-in in that directory, else LE L2CAP.
    /// - Throws: `StreamTransportError` when BlueZ's adapter address does not parse (L2CAP only).
    func streamTransport(adapterAddress: String, addressType: String) throws -> any StreamTransport {
        if let directory = streamsLocalDirectory {
            return LocalStreamTransport(directory: directory, adapterAddress: adapterAddress)
        }
        return try L2CAPStreamTransport(adapterAddress: adapterAddress, addressType: addressType)
    }
}
