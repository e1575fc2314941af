import Foundation
import HandoffProtocol

extension UserActivity {
    /// The fields as they go on the wire, checked against the protocol's limits.
    struct Fields {
        var title: String?
        var userInfo: [String: JSONValue]
        var webpageURL: String?
        var expiresIn: Double?
        var requiredUserInfoKeys: [String]
        var supportsStreams: Bool

        init(_ state: State, type: String, now: Date) throws(UserActivityError) {
            if let reason = ActivityTypeRule.violation(in: type) { throw .invalidType(type, reason: reason) }
            if let title = state.title, title.utf8.count > ProtocolLimits.maximumTitleBytes {
                throw .titleTooLong(bytes: title.utf8.count)
            }
            let size = (try? WireFormat.compactJSON(state.userInfo).count) ?? Int.max
            guard size <= ProtocolLimits.maximumUserInfoBytes else { throw .userInfoTooLarge(bytes: size) }
            if let url = state.webpageURL {
                guard WebpageURL.isAllowed(url) else { throw .unsupportedWebpageURL(url.absoluteString) }
                let bytes = url.absoluteString.utf8.count
                guard bytes <= ProtocolLimits.maximumURLBytes else { throw .webpageURLTooLong(bytes: bytes) }
            }
            let missing = state.requiredUserInfoKeys.filter { state.userInfo[$0] == nil }.sorted()
            guard missing.isEmpty else { throw .missingRequiredUserInfoKeys(missing) }
            if let date = state.expirationDate {
                let remaining = date.timeIntervalSince(now)
                guard remaining > 0 else { throw .expired(date) }
                guard remaining <= UserActivity.maximumLifetime else { throw .expirationTooFar(date) }
                expiresIn = remaining
            }
            title = state.title
            userInfo = state.userInfo
            webpageURL = state.webpageURL?.absoluteString
            requiredUserInfoKeys = state.requiredUserInfoKeys.sorted()
            supportsStreams = state.supportsStreams
        }
    }

    /// Checks the fields against the protocol's limits without sending anything.
    /// - Throws: the first `UserActivityError` found.
    public func validate() throws(UserActivityError) {
        _ = try Fields(state.withLock { $0 }, type: type, now: Date())
    }
}
