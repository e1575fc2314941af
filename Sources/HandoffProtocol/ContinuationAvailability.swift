/// In `status`: whether other devices can continue the activities published
/// on this machine, and why not.
///
/// Continuing needs a connectable advertisement, and handoffd advertises
/// connectably only from a private address: with LE privacy on in the kernel
/// for the adapter in use (docs/privacy.md). Otherwise activities published
/// here are still seen nearby, but cannot be fetched.
public struct ContinuationAvailability: Sendable, Codable, Hashable {
    /// `available`, `unavailable` or `unknown` (no adapter yet). Clients must
    /// treat values they do not know as `unknown`.
    public var state: String
    /// LE address privacy for the adapter: `on`, `off`, `unsupported` (the
    /// controller cannot), or `unknown` (the kernel could not be asked).
    public var addressPrivacy: String
    /// The adapter it is about (`hci0`), when there is one.
    public var adapter: String?
    /// Why, in words.
    public var reason: String
    /// What to do about it, when something can be done.
    public var fix: String?

    public static let available = "available"
    public static let unavailable = "unavailable"
    public static let unknown = "unknown"

    public init(state: String, addressPrivacy: String, adapter: String?, reason: String, fix: String? = nil) {
        self.state = state
        self.addressPrivacy = addressPrivacy
        self.adapter = adapter
        self.reason = reason
        self.fix = fix
    }

    /// True only when the daemon says so in words it knows.
    public var isAvailable: Bool { state == Self.available }
}
