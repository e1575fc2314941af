#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol

/// The activities published on this machine, and which one is current.
///
/// As on Apple devices, the current activity is the one most recently made
/// current (published, updated with becomeCurrent, …) that is neither resigned,
/// invalidated nor expired. Each user's current activity is advertised.
public struct LocalActivities: Sendable {
    public let maximumPerClient: Int
    private var activities: [String: LocalActivity] = [:]
    private var nextSerial: UInt64 = 0

    public init(maximumPerClient: Int) {
        self.maximumPerClient = maximumPerClient
    }

    public var count: Int { activities.count }
    public func activity(_ id: String) -> LocalActivity? { activities[id] }
    public func activities(of client: UInt64) -> [LocalActivity] { activities.values.filter { $0.client == client } }

    /// The activity to advertise now, if any.
    public func current(at now: ContinuousClock.Instant) -> LocalActivity? {
        activities.values
            .filter { $0.becameCurrent != nil && !$0.isExpired(at: now) }
            .max { $0.becameCurrent! < $1.becameCurrent! }
    }

    /// Each user's current activity, the most recently made current first:
    /// what is advertised, one beacon per user.
    public func currentByUser(at now: ContinuousClock.Instant) -> [LocalActivity] {
        var byUser: [UInt32: LocalActivity] = [:]
        for activity in activities.values where activity.becameCurrent != nil && !activity.isExpired(at: now) {
            if let other = byUser[activity.uid], other.becameCurrent! >= activity.becameCurrent! { continue }
            byUser[activity.uid] = activity
        }
        return byUser.values.sorted { $0.becameCurrent! > $1.becameCurrent! }
    }

    /// The activity of `uid` most recently made current (what would be advertised for that user alone).
    public func current(of uid: UInt32, at now: ContinuousClock.Instant) -> LocalActivity? {
        activities.values
            .filter { $0.uid == uid && $0.becameCurrent != nil && !$0.isExpired(at: now) }
            .max { $0.becameCurrent! < $1.becameCurrent! }
    }

    /// The earliest expiration still ahead, for scheduling.
    public func nextExpiration(after now: ContinuousClock.Instant) -> ContinuousClock.Instant? {
        activities.values.compactMap(\.expiration).filter { $0 > now }.min()
    }

    /// Validates and adds a new activity.
    /// - Throws: `ProtocolError` for a bad type, URL, size or too many activities.
    public mutating func publish(
        _ params: PublishParams, client: UInt64, uid: UInt32, now: ContinuousClock.Instant
    ) throws(ProtocolError) -> LocalActivity {
        guard activities(of: client).count < maximumPerClient else {
            throw ProtocolError(
                .tooManyActivities,
                "this connection already has \(maximumPerClient) activities; invalidate one first")
        }
        let type: ActivityType
        do { type = try ActivityType(params.type) } catch {
            throw ProtocolError(.invalidParams, "type: \(error)")
        }
        nextSerial += 1
        var activity = LocalActivity(
            id: "a\(nextSerial)", client: client, uid: uid, type: type, title: nil, userInfo: [:], webpageURL: nil,
            expiration: nil, requiredUserInfoKeys: [], becameCurrent: nil)
        try Self.apply(
            title: params.title, userInfo: params.userInfo, webpageURL: params.webpageURL, expiresIn: params.expiresIn,
            requiredKeys: params.requiredUserInfoKeys, to: &activity, now: now)
        activity.supportsStreams = params.supportsStreams ?? false
        if params.becomeCurrent ?? true { activity.becameCurrent = now }
        activities[activity.id] = activity
        return activity
    }

    /// Changes fields of a client's own activity (needsSave / update).
    public mutating func update(_ params: UpdateParams, client: UInt64, now: ContinuousClock.Instant)
        throws(ProtocolError) -> LocalActivity
    {
        guard var activity = activities[params.id], activity.client == client else {
            throw ProtocolError(.notFound, "this connection has no activity \"\(params.id)\"")
        }
        try Self.apply(
            title: params.title, userInfo: params.userInfo, webpageURL: params.webpageURL, expiresIn: params.expiresIn,
            requiredKeys: params.requiredUserInfoKeys, to: &activity, now: now)
        if let supportsStreams = params.supportsStreams { activity.supportsStreams = supportsStreams }
        if params.becomeCurrent == true { activity.becameCurrent = now }
        activities[activity.id] = activity
        return activity
    }

    /// resignCurrent: keeps the activity but stops advertising it.
    public mutating func resign(_ id: String, client: UInt64) throws(ProtocolError) {
        guard var activity = activities[id], activity.client == client else {
            throw ProtocolError(.notFound, "this connection has no activity \"\(id)\"")
        }
        activity.becameCurrent = nil
        activities[id] = activity
    }

    /// invalidate: the activity is gone for good.
    @discardableResult
    public mutating func invalidate(_ id: String, client: UInt64) throws(ProtocolError) -> LocalActivity {
        guard let activity = activities[id], activity.client == client else {
            throw ProtocolError(.notFound, "this connection has no activity \"\(id)\"")
        }
        activities[id] = nil
        return activity
    }

    /// Invalidates everything a closed connection published.
    public mutating func removeAll(of client: UInt64) -> [LocalActivity] {
        let gone = activities(of: client)
        for activity in gone { activities[activity.id] = nil }
        return gone
    }

    private static func apply(
        title: String?, userInfo: [String: JSONValue]?, webpageURL: String?, expiresIn: Double?,
        requiredKeys: [String]?, to activity: inout LocalActivity, now: ContinuousClock.Instant
    ) throws(ProtocolError) {
        if let title {
            guard title.utf8.count <= ProtocolLimits.maximumTitleBytes else {
                throw ProtocolError(
                    .payloadTooLarge,
                    "title is \(title.utf8.count) bytes; the limit is \(ProtocolLimits.maximumTitleBytes)")
            }
            if let problem = ActivityTitle.problem(title) { throw ProtocolError(.invalidParams, problem) }
            activity.title = title
        }
        if let userInfo {
            let size: Int
            do { size = try WireFormat.compactJSON(userInfo).count } catch {
                throw ProtocolError(.invalidParams, "userInfo: \(error)")
            }
            guard size <= ProtocolLimits.maximumUserInfoBytes else {
                throw ProtocolError(
                    .payloadTooLarge,
                    "userInfo is \(size) bytes as JSON; the limit is \(ProtocolLimits.maximumUserInfoBytes) (3 KB)")
            }
            activity.userInfo = userInfo
        }
        if let webpageURL {
            guard webpageURL.utf8.count <= ProtocolLimits.maximumURLBytes else {
                throw ProtocolError(.payloadTooLarge, "webpageURL is longer than \(ProtocolLimits.maximumURLBytes) bytes")
            }
            guard let url = URL(string: webpageURL), let scheme = url.scheme?.lowercased(),
                scheme == "http" || scheme == "https", url.host != nil
            else {
                throw ProtocolError(.invalidParams, "webpageURL must be an http or https URL, not \"\(webpageURL)\"")
            }
            activity.webpageURL = url
        }
        if let expiresIn {
            guard expiresIn > 0, expiresIn <= 7 * 24 * 3600 else {
                throw ProtocolError(.invalidParams, "expiresIn must be between 0 and 604800 seconds")
            }
            activity.expiration = now + .milliseconds(Int64(expiresIn * 1000))
        }
        if let requiredKeys {
            activity.requiredUserInfoKeys = requiredKeys
        }
        let missing = activity.requiredUserInfoKeys.filter { activity.userInfo[$0] == nil }
        guard missing.isEmpty else {
            throw ProtocolError(
                .invalidParams, "requiredUserInfoKeys names keys missing from userInfo: \(missing.joined(separator: ", "))")
        }
    }
}
