import BlueZ
import HandoffProtocol

/// What the address-privacy check allows on the air: the one input besides the
/// current activity that decides handoffd's advertisement (`Advertiser`).
public struct AdvertisingPolicy: Sendable, Equatable {
    /// False keeps the beacon off the air while scanning goes on.
    public var advertise: Bool
    /// `peripheral` (connectable, so the activity can be continued) only with LE privacy on.
    public var type: LEAdvertisementData.AdvertisingType
    /// What `status` says about continuing; nil while nothing has checked.
    public var availability: ContinuationAvailability?

    public init(advertise: Bool, type: LEAdvertisementData.AdvertisingType, availability: ContinuationAvailability?) {
        self.advertise = advertise
        self.type = type
        self.availability = availability
    }

    /// Until the privacy check has asked the kernel: a non-connectable beacon,
    /// which never shows the adapter's address to a peer that connects.
    public static let unchecked = AdvertisingPolicy(advertise: true, type: .broadcast, availability: nil)
}
