import Foundation
import HandoffProtocol

/// An app's link to handoffd: it publishes the app's `UserActivity` objects, reports
/// the activities of the user's other devices nearby, continues them, and delivers
/// the activities other programs continue for this app.
///
/// ```swift
/// let client = HandoffClient(app: "org.example.browser", handles: ["org.example.browser.viewing"])
///
/// // What the user's other laptops are doing:
/// for try await change in client.nearby(types: ["org.example.browser.viewing"]) {
///     guard case .appeared(let nearby) = change else { continue }
///     let restored = try await client.continue(nearby)
///     open(restored.webpage)
/// }
///
/// // Activities that `handoffctl continue` (or another program) continued for this app:
/// for try await restored in client.continuedActivities() { open(restored.webpage) }
/// ```
///
/// The client connects on first use and keeps its connection up on its own. When
/// handoffd goes away (a restart, an upgrade), it reconnects with backoff
/// (`ReconnectPolicy`), says hello again with the same `handles`, subscribes again
/// when anyone listens to `nearby()`, and publishes its live activities again, so
/// that the app does not notice. Requests made meanwhile wait for the reconnection
/// (at most `requestTimeout`). Until the client has connected once, a failure to
/// connect is reported at once instead (`HandoffClientError.daemonNotRunning`, …).
///
/// Closing the client, or dropping the last reference to it (activities and
/// running streams hold one), ends the connection, and handoffd invalidates the
/// client's activities.
public final class HandoffClient: Sendable {
    /// How a client connects and behaves.
    public struct Configuration: Sendable {
        /// The app's name for the daemon's logs, for example its reverse-DNS name.
        public var app: String
        /// The activity types the app can continue, like `NSUserActivityTypes`: the
        /// daemon names them in nearby activities and forwards their continuations here.
        public var handles: [String]
        /// The daemon's socket; nil means `HandoffConnection.defaultSocketPath()`.
        public var socketPath: String?
        /// How long a request waits for its answer, and a request made while the
        /// client reconnects waits for the connection.
        public var requestTimeout: Duration
        /// How the client reconnects after it lost the daemon.
        public var reconnect: ReconnectPolicy
        /// How long after a change a published activity is saved on its own; nil
        /// saves only on `UserActivity.update()` and `becomeCurrent()`.
        public var autosaveDelay: Duration?
        /// Hear the pairing attempts of this user, whichever program started them
        /// (`pairingChanges()`), and answer them (`answerPairing`): the desktop agent does.
        public var pairingEvents: Bool

        /// A configuration; see each property for what it does. Saves come 100 ms after a change.
        public init(
            app: String, handles: [String] = [], socketPath: String? = nil,
            requestTimeout: Duration = HandoffConnection.defaultRequestTimeout, reconnect: ReconnectPolicy = .default,
            autosaveDelay: Duration? = .milliseconds(100), pairingEvents: Bool = false
        ) {
            self.pairingEvents = pairingEvents
            self.app = app
            self.handles = handles
            self.socketPath = socketPath
            self.requestTimeout = requestTimeout
            self.reconnect = reconnect
            self.autosaveDelay = autosaveDelay
        }
    }

    /// The process's shared client, for `UserActivity(type:)`: named after the process,
    /// declaring no types, on the default socket. Apps that continue activities make
    /// their own client with `handles`.
    public static let shared = HandoffClient(app: ProcessInfo.processInfo.processName)

    /// How this client connects and behaves.
    public var configuration: Configuration { core.configuration }

    let core: ClientCore

    /// A client with `configuration`; it connects on first use.
    public init(configuration: Configuration) {
        core = ClientCore(configuration: configuration)
    }

    /// A client for `app`, declaring `handles`.
    public convenience init(
        app: String, handles: [String] = [], socketPath: String? = nil, reconnect: ReconnectPolicy = .default
    ) {
        self.init(configuration: Configuration(app: app, handles: handles, socketPath: socketPath, reconnect: reconnect))
    }

    deinit {
        core.finish(with: nil)
    }

    /// Connects now, rather than on first use, and waits until the client is ready.
    /// - Throws: `HandoffClientError` when handoffd cannot be reached or refuses `hello`.
    public func connect() async throws {
        _ = try await core.ready()
    }

    /// Where the client stands now.
    public var status: ClientStatus { core.inner.withLock { $0.status } }

    /// The status now, then each change, until the client closes.
    public func statusUpdates() -> AsyncStream<ClientStatus> {
        core.statusUpdates()
    }

    /// Closes the connection for good. handoffd invalidates this client's activities;
    /// streams end, and later requests fail with `.connectionClosed`.
    public func close() async {
        core.finish(with: nil)
    }

    // MARK: Nearby activities

    /// The activities of the user's other devices, as they appear, change and go.
    ///
    /// The stream first reports what is nearby now (as `.appeared`), then each change, in the
    /// order handoffd made them. After a reconnection it reports what the restarted daemon no
    /// longer knows as `.lost`, then what that daemon has as `.appeared` or `.updated`, then
    /// the changes that follow; no change is reported twice, nor one the daemon's list had
    /// already overtaken. Each call makes a new stream.
    ///
    /// - Parameter types: only activities of these types (a type is known only when an
    ///   app on this machine declared it); nil reports every activity.
    /// - Returns: a stream that ends when the client closes, and throws when the client
    ///   cannot connect (before it ever did) or gives up reconnecting.
    public func nearby(types: [String]? = nil) -> AsyncThrowingStream<NearbyChange, any Error> {
        core.nearby(types: types, keepingAlive: self)
    }

    /// The activities nearby now.
    public func list() async throws -> [NearbyActivity] {
        try await core.withConnection { try await $0.list().activities }
    }

    /// The daemon's state, as this user may see it.
    public func daemonStatus() async throws -> StatusResult {
        try await core.withConnection { try await $0.status() }
    }

    // MARK: Continuing

    /// Continues a nearby activity: handoffd fetches it from its device, checks it and
    /// hands it over here, and the app that published it there is told.
    ///
    /// - Parameters:
    ///   - nearby: the activity, from `nearby()` or `list()`.
    ///   - timeout: how long the daemon waits for the other device (1 to 60 seconds;
    ///     nil: 10 seconds).
    ///   - willContinue: called as soon as the daemon has accepted the request, before
    ///     anything goes over the air (NSUserActivity's `willContinue`): a moment to show
    ///     progress. It gets the continuation's id and, when known, the type.
    /// - Returns: the restored activity, whole and authenticated.
    /// - Throws: `ContinueError`, one case per failure code (`.outOfRange`, `.timeout`,
    ///   `.rejected`, `.noHandler`, `.payloadInvalid`, `.cancelled`);
    ///   `HandoffClientError` when the request fails (`not-found`: no such nearby
    ///   activity) or the connection closes meanwhile; `CancellationError` when the task
    ///   is cancelled, in which case `continue.cancel` has been sent.
    public func `continue`(
        _ nearby: NearbyActivity, timeout: Duration? = nil, willContinue: (@Sendable (WillContinue) -> Void)? = nil
    ) async throws -> ContinuedActivity {
        try await self.continue(nearbyID: nearby.id, timeout: timeout, willContinue: willContinue)
    }

    /// `continue(_:timeout:willContinue:)` by the nearby activity's id.
    public func `continue`(
        nearbyID: String, timeout: Duration? = nil, willContinue: (@Sendable (WillContinue) -> Void)? = nil
    ) async throws -> ContinuedActivity {
        let (connection, _) = try await core.ready()
        return try await connection.continue(nearbyID: nearbyID, timeout: timeout, willContinue: willContinue)
    }

    /// Activities continued for this app by another program on this machine (such as
    /// `handoffctl continue`), because the app declared their type in `handles`: the
    /// counterpart of `application(_:continue:restorationHandler:)`.
    ///
    /// Connects if the client is not connected yet. Activities that arrive while no
    /// stream listens are kept (up to 16) for the next one.
    public func continuedActivities() -> AsyncThrowingStream<ContinuedActivity, any Error> {
        let stream = core.continuedActivities(keepingAlive: self)
        core.start()
        return stream
    }
}
