/// Where a recognised beacon came from: one device of one account during one epoch.
///
/// This is the key under which the daemon tracks a nearby device's activity,
/// and the unit of replay protection.
public struct BeaconOrigin: Hashable, Sendable, CustomStringConvertible {
    /// The account whose key authenticated the beacon.
    public let account: AccountID
    /// The epoch the beacon was made for.
    public let epoch: Epoch
    /// The sender's per-epoch device identifier.
    public let device: DeviceID

    /// Groups the three parts.
    public init(account: AccountID, epoch: Epoch, device: DeviceID) {
        self.account = account
        self.epoch = epoch
        self.device = device
    }

    /// `account 0123456789abcdef, epoch 2893421 (600 s), device 89abcdef`.
    public var description: String { "account \(account), \(epoch), device \(device)" }
}
