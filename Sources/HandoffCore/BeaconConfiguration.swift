/// Deployment-wide beacon parameters. Every device of an account must use the
/// same values, or they will not recognise each other.
public struct BeaconConfiguration: Sendable, Hashable {
    /// Epoch length in seconds (default 600: 10 minutes). The BLE address
    /// must rotate at the same boundaries (see docs/beacon-format.md, "Residual risks").
    public var epochLength: UInt32
    /// Bluetooth SIG company identifier of the Manufacturer Specific Data
    /// structure (default 0xFFFF, the value reserved for testing).
    public var companyID: UInt16

    /// The default: 10-minute epochs, company 0xFFFF.
    public static let `default` = BeaconConfiguration()

    /// - Precondition: `epochLength > 0`.
    public init(epochLength: UInt32 = Epoch.defaultLength, companyID: UInt16 = 0xFFFF) {
        precondition(epochLength > 0, "epoch length must be at least one second")
        self.epochLength = epochLength
        self.companyID = companyID
    }

    /// The epoch containing `now` (seconds since the Unix epoch).
    public func epoch(containing now: Double) -> Epoch {
        Epoch(containing: now, length: epochLength)
    }
}
