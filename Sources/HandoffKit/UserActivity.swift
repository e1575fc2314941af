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
    /// Sends this activity's changes to the daemon one at a time.
    private let syncLock = AsyncLock()

    /// A new activity of `type`, published through `client`. Nothing is sent until `becomeCurrent()`.
    public init(type: String, client: HandoffClient) {
        self.type = type
        self.client = client
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

    // MARK: Lifecycle

    /// Makes this the current activity of the machine, which handoffd advertises to the
    /// user's other devices; publishes it the first time.
    ///
    /// - Throws: `UserActivityError` when a field breaks a limit (nothing is sent);
    ///   `HandoffClientError` when handoffd refuses (`no-account`, …) or cannot be reached.
    ///   After a failure the activity is not current.
    public func becomeCurrent() async throws {
        if isInvalidated { throw UserActivityError.invalidated }
        try validate()
        let order = client.core.nextCurrentOrder()
        let previous = try state.withLock { state throws(UserActivityError) -> Phase in
            guard state.phase != .invalidated else { throw .invalidated }
            let previous = state.phase
            state.phase = .current
            state.currentOrder = order
            return previous
        }
        client.core.track(self)
        do {
            try await perform(.becomeCurrent)
        } catch {
            state.withLock { state in
                if state.phase == .current, state.currentOrder == order { state.phase = previous }
            }
            throw error
        }
    }

    /// Stops advertising the activity, keeping it: `becomeCurrent()` brings it back.
    /// Does nothing unless the activity is current.
    /// - Throws: `HandoffClientError` when handoffd cannot be told (it is resigned here anyway).
    public func resignCurrent() async throws {
        let wasCurrent = state.withLock { state -> Bool in
            guard state.phase == .current else { return false }
            state.phase = .resigned
            return true
        }
        guard wasCurrent else { return }
        try await perform(.resign)
    }

    /// Ends the activity for good. The daemon forgets it; listeners of
    /// `wasContinuedEvents()` see their streams end.
    public func invalidate() async {
        let (sinks, wasPublished) = state.withLock { state in
            let wasPublished = state.phase != .new && state.phase != .invalidated
            state.phase = .invalidated
            let sinks = Array(state.wasContinuedSinks.values)
            state.wasContinuedSinks.removeAll()
            return (sinks, wasPublished)
        }
        for sink in sinks { sink.finish() }
        if wasPublished { try? await perform(.invalidate) }
        client.core.untrack(ObjectIdentifier(self), publishedAs: nil)
    }

    /// Saves the fields now, when the activity `needsSave` and is published, instead
    /// of waiting for the automatic save.
    /// - Throws: `UserActivityError` or `HandoffClientError`, as `becomeCurrent()`.
    public func update() async throws {
        let due = state.withLock { $0.needsSave && ($0.phase == .current || $0.phase == .resigned) }
        guard due else { return }
        try await perform(.save)
    }

    // MARK: wasContinued

    /// Notices that another device continued this activity, as they arrive
    /// (NSUserActivity's `userActivityWasContinued`). Each call makes a new stream;
    /// each stream gets every notice from its creation on, and ends when the
    /// activity is invalidated.
    public func wasContinuedEvents() -> AsyncStream<WasContinuedEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: WasContinuedEvent.self)
        let token = state.withLock { state -> UInt64? in
            guard state.phase != .invalidated else { return nil }
            state.nextSinkToken += 1
            state.wasContinuedSinks[state.nextSinkToken] = continuation
            return state.nextSinkToken
        }
        guard let token else {
            continuation.finish()
            return stream
        }
        continuation.onTermination = { [weak self] _ in
            _ = self?.state.withLock { $0.wasContinuedSinks.removeValue(forKey: token) }
        }
        return stream
    }

    /// A `wasContinued` event for this activity.
    func receive(_ notice: WasContinuedEvent) {
        let (sinks, delegate) = state.withLock { (Array($0.wasContinuedSinks.values), $0.delegate.delegate) }
        for sink in sinks { sink.yield(notice) }
        if let delegate {
            Task { delegate.userActivityWasContinued(self, byDevice: notice.byDevice) }
        }
    }

    // MARK: Talking to the daemon

    enum Intent: Sendable {
        case becomeCurrent, resign, save, invalidate, restore
    }

    /// Brings the daemon's copy in line with this object for `intent`, on the client's
    /// connection, riding out a reconnection: when the connection closes mid-way, the
    /// next connection's restore publishes the activity again, and this tries once more.
    private func perform(_ intent: Intent) async throws {
        var closedConnections = 0
        while true {
            let (connection, generation) = try await client.core.ready()
            do {
                await syncLock.lock()
                defer { syncLock.unlock() }
                try await push(intent, on: connection, generation: generation)
                return
            } catch let error as HandoffClientError where error == .connectionClosed && closedConnections < 3 {
                closedConnections += 1
            }
        }
    }

    /// Publishes the activity again on a new connection (called by the client's restore).
    /// - Throws: only `.connectionClosed`; the daemon refusing the activity goes to the delegate.
    func restore(on connection: HandoffConnection, generation: Int) async throws {
        await syncLock.lock()
        defer { syncLock.unlock() }
        do {
            try await push(.restore, on: connection, generation: generation)
        } catch let error as HandoffClientError where error == .connectionClosed {
            throw error
        } catch UserActivityError.expired {
            return  // an expired activity is not advertised any more anyway
        } catch {
            delegate?.userActivity(self, didFailToSave: error)
        }
    }

    /// One round of requests for `intent`. The caller holds `syncLock`.
    private func push(_ intent: Intent, on connection: HandoffConnection, generation: Int) async throws {
        let snapshot = state.withLock { state in
            (state: state, id: state.generation == generation ? state.daemonID : nil)
        }
        let current = snapshot.state
        switch current.phase {
        case .new:
            return
        case .invalidated:
            guard let id = snapshot.id else { return }
            state.withLock { state in
                if state.daemonID == id { state.daemonID = nil }
            }
            // Best effort: a closed connection has dropped it already.
            try? await connection.invalidate(id: id)
            return
        case .current, .resigned:
            break
        }
        let fields = try Fields(current, type: type, now: Date())
        let makeCurrent = current.phase == .current
        let sent = current.sent
        let mustRepublish =
            (sent.title && current.title == nil) || (sent.webpageURL && current.webpageURL == nil)
            || (sent.expiration && current.expirationDate == nil)
        if let id = snapshot.id, !mustRepublish {
            // Made current again since the daemon last heard (a restore may just have published it current).
            let becomesCurrent = makeCurrent && current.sentCurrentOrder != current.currentOrder
            if current.needsSave || becomesCurrent {
                try await connection.update(
                    UpdateParams(
                        id: id, title: fields.title, userInfo: fields.userInfo, webpageURL: fields.webpageURL,
                        expiresIn: fields.expiresIn, requiredUserInfoKeys: fields.requiredUserInfoKeys,
                        becomeCurrent: becomesCurrent ? true : nil))
                saved(fields, version: current.version, id: id, generation: generation)
                if becomesCurrent { sentCurrent(current.currentOrder) }
            }
            if intent == .resign, !makeCurrent {
                try await connection.resign(id: id)
            }
        } else {
            // Not published on this connection, or a field must go that `update` cannot remove.
            let id = try await connection.publish(
                PublishParams(
                    type: type, title: fields.title, userInfo: fields.userInfo.isEmpty ? nil : fields.userInfo,
                    webpageURL: fields.webpageURL, expiresIn: fields.expiresIn,
                    requiredUserInfoKeys: fields.requiredUserInfoKeys.isEmpty ? nil : fields.requiredUserInfoKeys,
                    becomeCurrent: makeCurrent)
            ).id
            saved(fields, version: current.version, id: id, generation: generation)
            if makeCurrent { sentCurrent(current.currentOrder) }
            client.core.published(self, as: id, generation: generation, replacing: snapshot.id)
            if let old = snapshot.id { try? await connection.invalidate(id: old) }
        }
    }

    /// Records a successful publish or update.
    private func saved(_ fields: Fields, version: UInt64, id: String, generation: Int) {
        state.withLock { state in
            state.daemonID = id
            state.generation = generation
            state.sent = SentFields(
                title: fields.title != nil, webpageURL: fields.webpageURL != nil, expiration: fields.expiresIn != nil)
            if state.version == version { state.needsSave = false }
        }
    }

    private func sentCurrent(_ order: UInt64) {
        state.withLock { $0.sentCurrentOrder = max($0.sentCurrentOrder, order) }
    }

    /// The fields as they go on the wire, checked against the protocol's limits.
    struct Fields {
        var title: String?
        var userInfo: [String: JSONValue]
        var webpageURL: String?
        var expiresIn: Double?
        var requiredUserInfoKeys: [String]

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
        }
    }

    /// Checks the fields against the protocol's limits without sending anything.
    /// - Throws: the first `UserActivityError` found.
    public func validate() throws(UserActivityError) {
        _ = try Fields(state.withLock { $0 }, type: type, now: Date())
    }
}
