import Foundation
import HandoffProtocol
import Synchronization

/// What the user is doing in an app, for their other devices to continue: the
/// counterpart of `NSUserActivity`.
///
/// ```swift
/// let client = HandoffClient(app: "org.example.browser")
/// let activity = UserActivity(type: "org.example.browser.viewing", client: client)
/// activity.title = "Release notes"
/// activity.webpageURL = URL(string: "https://example.org/notes")
/// activity.userInfo = ["scroll": 0.25]
/// try await activity.becomeCurrent()       // handoffd advertises it
///
/// activity.userInfo["scroll"] = 0.75       // saved on its own, shortly after
/// for await notice in activity.wasContinuedEvents() {
///     print("continued on device \(notice.byDevice)")
/// }
/// ```
///
/// An activity lives on its client's connection. When handoffd restarts, the client
/// reconnects and publishes every activity that was current or resigned again, with
/// its latest fields, so the app does not notice. Dropping the last reference to an
/// activity invalidates it.
///
/// Setting a property marks the activity `needsSave`; a published activity is then
/// saved (sent with `update`) after `HandoffClient.Configuration.autosaveDelay`, or at
/// once with `update()`. The fields are checked against the protocol's limits before
/// anything is sent (`UserActivityError`).
public final class UserActivity: Sendable {
    /// The activity type, in reverse-DNS form (`org.example.browser.viewing`).
    public let type: String
    /// The client that publishes this activity.
    public let client: HandoffClient

    enum Phase: Sendable {
        /// Not yet made current.
        case new
        case current
        case resigned
        case invalidated
    }

    /// What the daemon's copy has, among the fields `update` cannot remove.
    struct SentFields: Sendable {
        var title = false
        var webpageURL = false
        var expiration = false
        var supportsStreams = false
    }

    struct DelegateReference: Sendable {
        weak var delegate: (any UserActivityDelegate)?
    }

    struct State: Sendable {
        var title: String?
        var userInfo: [String: JSONValue] = [:]
        var webpageURL: URL?
        var requiredUserInfoKeys: Set<String> = []
        var expirationDate: Date?
        var supportsStreams = false
        var needsSave = false
        /// Counts changes, so that a save only clears `needsSave` when nothing changed meanwhile.
        var version: UInt64 = 0
        var phase = Phase.new
        var currentOrder: UInt64 = 0
        /// The `currentOrder` the daemon's copy was last made current with.
        var sentCurrentOrder: UInt64 = 0
        /// The daemon's id for this activity, valid on `generation` of the client's connection.
        var daemonID: String?
        var generation = 0
        var sent = SentFields()
        var saveScheduled = false
        var delegate = DelegateReference()
        var nextSinkToken: UInt64 = 0
        var wasContinuedSinks: [UInt64: AsyncStream<WasContinuedEvent>.Continuation] = [:]
    }

    let state = Mutex(State())
    /// Sends this activity's changes to the daemon one at a time (UserActivity+Sync.swift).
    let syncLock = AsyncLock()

    /// Continuation streams that continuing devices opened to this activity, as they arrive
    /// (NSUserActivity's `userActivity(_:didReceive:outputStream:)`), when it
    /// `supportsContinuationStreams`. Streams wait here until read (at most
    /// `maximumWaitingStreams`, the oldest closed beyond them); a delegate that implements
    /// `userActivity(_:didReceive:)` takes them instead. It ends when the activity is
    /// invalidated. One consumer: iterate it from one task at a time.
    public let incomingStreams: AsyncStream<ContinuationStreams>
    let incomingSink: AsyncStream<ContinuationStreams>.Continuation

    /// The most incoming streams kept for an app that has not read `incomingStreams` yet.
    public static let maximumWaitingStreams = 8

    /// A new activity of `type`, published through `client`. Nothing is sent until `becomeCurrent()`.
    public init(type: String, client: HandoffClient) {
        self.type = type
        self.client = client
        (incomingStreams, incomingSink) = AsyncStream.makeStream(
            of: ContinuationStreams.self, bufferingPolicy: .bufferingNewest(Self.maximumWaitingStreams))
    }

    /// A new activity of `type`, published through `HandoffClient.shared`.
    public convenience init(type: String) {
        self.init(type: type, client: .shared)
    }

    deinit {
        let (id, generation, sinks) = state.withLock { state in
            (state.daemonID, state.generation, Array(state.wasContinuedSinks.values))
        }
        for sink in sinks { sink.finish() }
        incomingSink.finish()
        let core = client.core
        core.untrack(ObjectIdentifier(self), publishedAs: id)
        if let id { Task { await core.invalidateLeftover(id, generation: generation) } }
    }

    // MARK: Fields

    /// Shown on the user's other devices; at most `ProtocolLimits.maximumTitleBytes` bytes of UTF-8.
    public var title: String? {
        get { state.withLock { $0.title } }
        set { change { $0.title = newValue } }
    }

    /// The app's data for the continuing side; at most `ProtocolLimits.maximumUserInfoBytes`
    /// bytes as compact JSON. `JSONValue` takes literals: `activity.userInfo["page"] = 3`.
    public var userInfo: [String: JSONValue] {
        get { state.withLock { $0.userInfo } }
        set { change { $0.userInfo = newValue } }
    }

    /// A web page that shows the same thing, opened where no app handles the type:
    /// `http` or `https` only, at most `ProtocolLimits.maximumURLBytes` bytes.
    public var webpageURL: URL? {
        get { state.withLock { $0.webpageURL } }
        set { change { $0.webpageURL = newValue } }
    }

    /// userInfo keys the continuing side must receive: a continuation that lacks any of
    /// them fails rather than restoring part of the activity. Each must be in `userInfo`.
    public var requiredUserInfoKeys: Set<String> {
        get { state.withLock { $0.requiredUserInfoKeys } }
        set { change { $0.requiredUserInfoKeys = newValue } }
    }

    /// After this date the activity is neither advertised nor handed over; at most
    /// `maximumLifetime` ahead when it is sent.
    public var expirationDate: Date? {
        get { state.withLock { $0.expirationDate } }
        set { change { $0.expirationDate = newValue } }
    }

    /// Whether the app takes continuation streams for this activity (NSUserActivity's
    /// `supportsContinuationStreams`): sent as `supportsStreams`, so that the beacon says so and a
    /// continuing app may open a stream to it, which arrives on `incomingStreams`. False by default.
    public var supportsContinuationStreams: Bool {
        get { state.withLock { $0.supportsStreams } }
        set { change { $0.supportsStreams = newValue } }
    }

    /// The longest an activity may be set to live: 7 days.
    public static let maximumLifetime: TimeInterval = 7 * 24 * 3600

    /// Whether the fields changed since they were last sent. Setting it to true asks
    /// for a save, as changing a field does.
    public var needsSave: Bool {
        get { state.withLock { $0.needsSave } }
        set {
            if newValue {
                change { _ in }
            } else {
                state.withLock { $0.needsSave = false }
            }
        }
    }

    /// Told when the activity is continued on another device, and when a save fails.
    /// Held weakly.
    public var delegate: (any UserActivityDelegate)? {
        get { state.withLock { $0.delegate.delegate } }
        set { state.withLock { $0.delegate = DelegateReference(delegate: newValue) } }
    }

    /// Whether the activity is current: `becomeCurrent()` succeeded and neither
    /// `resignCurrent()` nor `invalidate()` came after.
    public var isCurrent: Bool { state.withLock { $0.phase == .current } }

    /// Whether `invalidate()` was called.
    public var isInvalidated: Bool { state.withLock { $0.phase == .invalidated } }

    /// The daemon's id for the activity while it is published (it changes when the
    /// client reconnects); for logs and diagnostics.
    public var publishedID: String? { state.withLock { $0.daemonID } }

    var currentOrder: UInt64 { state.withLock { $0.currentOrder } }

    /// Adds entries to `userInfo`, replacing those with the same keys.
    public func addUserInfoEntries(from entries: [String: JSONValue]) {
        change { $0.userInfo.merge(entries) { _, new in new } }
    }

    /// Replaces `userInfo` with `value` encoded as a JSON object: an app's own
    /// `Codable` state, read back on the other side with `ContinuedActivity.userInfo(as:)`.
    /// - Throws: `EncodingError`, or `UserActivityError.userInfoTooLarge` when it does not
    ///   encode as an object within the limit.
    public func setUserInfo<T: Encodable>(_ value: T) throws {
        guard case .object(let object) = try JSONValue(encoding: value) else {
            throw EncodingError.invalidValue(
                value, .init(codingPath: [], debugDescription: "userInfo must encode as a JSON object"))
        }
        let size = try WireFormat.compactJSON(object).count
        guard size <= ProtocolLimits.maximumUserInfoBytes else { throw UserActivityError.userInfoTooLarge(bytes: size) }
        userInfo = object
    }

    /// Applies a change to the fields, marks the activity `needsSave`, and schedules an
    /// automatic save when it is published.
    private func change(_ body: (inout State) -> Void) {
        let delay = client.configuration.autosaveDelay
        let schedule = state.withLock { state -> Bool in
            body(&state)
            state.version += 1
            state.needsSave = true
            guard let delay, delay >= .zero, state.phase == .current || state.phase == .resigned, !state.saveScheduled
            else { return false }
            state.saveScheduled = true
            return true
        }
        guard schedule, let delay else { return }
        Task { [weak self] in
            try? await Task.sleep(for: delay)
            await self?.autosave()
        }
    }

    private func autosave() async {
        let due = state.withLock { state -> Bool in
            state.saveScheduled = false
            return state.needsSave && (state.phase == .current || state.phase == .resigned)
        }
        guard due else { return }
        delegate?.userActivityWillSave(self)
        do {
            try await perform(.save)
        } catch {
            delegate?.userActivity(self, didFailToSave: error)
        }
    }
}
