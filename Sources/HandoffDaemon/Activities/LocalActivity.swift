#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol

/// An activity an app on this machine published.
public struct LocalActivity: Sendable, Equatable {
    public let id: String
    /// The connection that published it; it is invalidated when that connection closes.
    public let client: UInt64
    /// The publisher's uid, which decides the account it is advertised under.
    public let uid: UInt32
    public var type: ActivityType
    public var title: String?
    public var userInfo: [String: JSONValue]
    public var webpageURL: URL?
    /// After this, the activity is neither advertised nor served.
    public var expiration: ContinuousClock.Instant?
    public var requiredUserInfoKeys: [String]
    /// When it last became current; the most recent one is advertised.
    public var becameCurrent: ContinuousClock.Instant?
    /// The app takes continuation streams for it (`publish`/`update` `supportsStreams`): its beacon says so.
    public var supportsStreams = false

    /// The beacon flags this activity's beacon carries.
    public var flags: BeaconFlags {
        var flags: BeaconFlags = []
        if !userInfo.isEmpty || title != nil { flags.insert(.hasPayload) }
        if webpageURL != nil { flags.insert(.hasWebpageURL) }
        if supportsStreams { flags.insert(.supportsStreams) }
        return flags
    }

    public func isExpired(at now: ContinuousClock.Instant) -> Bool {
        expiration.map { $0 <= now } ?? false
    }
}
