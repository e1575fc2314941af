import DBus

/// bluetoothd refused an advertisement because its data does not fit.
///
/// The API documents `org.bluez.Error.InvalidLength` for this, but bluetoothd
/// 5.66 never sends it: it answers `org.bluez.Error.Failed` ("Failed to
/// register advertisement" on kernels with extended-advertising commands,
/// "Failed to parse advertisement." otherwise), which it also sends for other
/// reasons (a legacy controller that cannot start advertising while it scans).
/// So a `Failed` counts as "too long" only when the data, counted as bluetoothd
/// counts it, is over the adapter's budget. Sending the same data again cannot
/// help; only other data can.
public struct AdvertisementTooLong: Error, Sendable, Equatable, CustomStringConvertible {
    /// The advertising data length, as bluetoothd counts it.
    public var length: Int
    /// What the adapter allows for it.
    public var budget: Int
    /// bluetoothd's reply.
    public var reply: DBusError

    public init(length: Int, budget: Int, reply: DBusError) {
        self.length = length
        self.budget = budget
        self.reply = reply
    }

    /// Reads bluetoothd's reply to `RegisterAdvertisement` of `data`: nil when
    /// the refusal is not about the length.
    /// - Parameter maxAdvertisingLength: the adapter's `MaxAdvLen`, when it reports one (31 otherwise).
    public init?(_ reply: DBusError, data: LEAdvertisementData, maxAdvertisingLength: Int?) {
        let length = data.advertisingDataLength
        let budget = data.advertisingDataBudget(maxAdvertisingLength: maxAdvertisingLength ?? 31)
        if reply.is(.bluezInvalidLength) || (reply.is(.bluezFailed) && length > budget) {
            self.init(length: length, budget: budget, reply: reply)
        } else {
            return nil
        }
    }

    public var description: String {
        "bluetoothd refused the advertisement: the data is too long (\(length) bytes, at most \(budget)); "
            + "not retried until the data changes (\(reply.name): \(reply.message))"
    }
}
