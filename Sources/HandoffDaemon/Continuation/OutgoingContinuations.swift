#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol
import Synchronization

/// The continuing side: the `continue`s that clients asked for and that have
/// not finished, and our per-epoch identity in requests (docs/protocol.md:
/// `willContinue` at once, then exactly one `continued` or `continueFailed`).
struct OutgoingContinuations: Sendable {
    /// A `continue` under way.
    struct Pending: Sendable {
        let client: UInt64
        /// The requesting connection's uid: the restored activity goes to this user's apps only.
        let uid: UInt32
        let nearbyID: String
        let account: AccountKey
        let typeHash: ActivityTypeHash
        /// The origin device's per-epoch identifier, for the log and the restored activity.
        let origin: String
        var task: Task<Void, Never>?
        /// `continue`'s `streams`: the request takes streams, and the continuation opens one.
        var wantsStream = false
        /// The request whose response is being opened (the last one made), for the stream's keys.
        var requests = LastRequest()
        /// `continue`'s `timeout`, in seconds, and when it ends: it bounds the whole continuation, the
        /// stream's channel and handshake included.
        var seconds = OutgoingContinuations.defaultTimeout
        var deadline = ContinuousClock.now + .seconds(OutgoingContinuations.defaultTimeout)
    }

    /// The latest request of one continuation (each attempt makes a fresh one; the last is answered).
    final class LastRequest: Sendable {
        private let latest = Mutex<PendingContinuation?>(nil)
        var value: PendingContinuation? { latest.withLock { $0 } }
        func record(_ request: PendingContinuation?) { latest.withLock { $0 = request } }
    }

    static let defaultTimeout = 10.0

    private var pending: [String: Pending] = [:]
    private var next: UInt64 = 0
    /// Our per-epoch identifier for an account when we advertise nothing for it.
    private var requesterIDs: [AccountID: (epoch: Epoch, device: DeviceID)] = [:]

    /// Whether no continuation is under way.
    var isEmpty: Bool { pending.isEmpty }

    /// Whether a continuation waits for, or is fetching from, the device `origin` (its per-epoch identifier).
    func involves(origin: String) -> Bool { pending.values.contains { $0.origin == origin } }

    /// Names and records a new continuation.
    mutating func add(_ continuation: Pending) -> String {
        next += 1
        let name = "c\(next)"
        pending[name] = continuation
        return name
    }

    mutating func attach(_ task: Task<Void, Never>, to name: String) {
        pending[name]?.task = task
    }

    /// Puts back a continuation `finish` removed that goes on (its stream is being opened).
    mutating func resume(_ name: String, _ continuation: Pending) {
        pending[name] = continuation
    }

    /// Removes a finished continuation; nil when it had already ended (cancelled).
    mutating func finish(_ name: String) -> Pending? {
        pending.removeValue(forKey: name)
    }

    /// Cancels `name` if `client` asked for it.
    mutating func cancel(_ name: String, of client: UInt64) -> Pending? {
        guard let found = pending[name], found.client == client else { return nil }
        pending[name] = nil
        found.task?.cancel()
        return found
    }

    /// Cancels every continuation of a closed connection.
    mutating func cancelAll(of client: UInt64) {
        for (name, found) in pending where found.client == client { _ = cancel(name, of: found.client) }
    }

    /// Cancels everything; returns what was cancelled.
    mutating func cancelAll() -> [(name: String, pending: Pending)] {
        defer { pending.removeAll() }
        return pending.map { name, found in
            found.task?.cancel()
            return (name, found)
        }
    }

    /// Our per-epoch device identifier for `account`: the one our beacons carry
    /// (`own`), or one drawn for the epoch.
    mutating func requester(for account: AccountID, epoch: Epoch, own: BeaconOrigin?) -> DeviceID {
        if let own, own.epoch == epoch { return own.device }
        if let kept = requesterIDs[account], kept.epoch == epoch { return kept.device }
        let fresh = DeviceID(rawValue: .random(in: .min ... .max))
        requesterIDs[account] = (epoch, fresh)
        return fresh
    }

    /// The checks of docs/continuation.md, section 5, before anything reaches an app.
    /// - Parameter handled: whether an app here declares a type.
    static func check(_ payload: ActivityPayload, _ pending: Pending, handled: (ActivityType) -> Bool)
        throws(ContinueError) -> ContinuedActivity
    {
        guard payload.type.hash(for: pending.account) == pending.typeHash else {
            throw ContinueError(.payloadInvalid, "the activity's type is not the one its beacon announced")
        }
        // An origin that does not check titles (an older handoffd) is refused the same way.
        if let title = payload.title, let problem = ActivityTitle.problem(title) {
            throw ContinueError(.payloadInvalid, problem)
        }
        var userInfo: [String: JSONValue]?
        if let bytes = payload.userInfo {
            guard let object = try? JSONDecoder().decode([String: JSONValue].self, from: Data(bytes)) else {
                throw ContinueError(.payloadInvalid, "userInfo is not a JSON object")
            }
            userInfo = object
        }
        let missing = (payload.requiredUserInfoKeys ?? []).filter { userInfo?[$0] == nil }
        guard missing.isEmpty else {
            throw ContinueError(.payloadInvalid, "userInfo lacks required keys: \(missing.joined(separator: ", "))")
        }
        if !handled(payload.type) && payload.webpageURL == nil {
            throw ContinueError(.noHandler, "no app here handles \(payload.type), and the activity has no webpage URL")
        }
        return ContinuedActivity(
            type: payload.type.rawValue, title: payload.title, userInfo: userInfo, webpageURL: payload.webpageURL,
            requiredUserInfoKeys: payload.requiredUserInfoKeys, account: pending.account.name, device: pending.origin)
    }
}
