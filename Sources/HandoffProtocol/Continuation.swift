#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

// The continuation messages: `continue` and `continue.cancel`, and the events
// `continued`, `continueFailed` and `wasContinued` (docs/protocol.md, "Continuing").

/// `continue`: fetch a nearby activity's full payload from its origin device.
public struct ContinueParams: Sendable, Codable, Hashable {
    /// The nearby activity's `id`, from `list` or an `appeared` event.
    public var id: String
    /// Seconds to wait for the origin device before failing with `timeout`; 1 to 60, default 10.
    public var timeout: Double?
    /// True: the continuation also opens a continuation stream with the origin app, or fails with
    /// `streams-unsupported` (docs/protocol.md, "Continuation streams").
    public var streams: Bool?

    public init(id: String, timeout: Double? = nil, streams: Bool? = nil) {
        self.id = id
        self.timeout = timeout
        self.streams = streams
    }
}

/// The result of `continue`, sent at once (NSUserActivity's willContinue): the
/// fetch has started, and exactly one `continued` or `continueFailed` event with
/// the same `continuation` follows on this connection.
public struct WillContinue: Sendable, Codable, Hashable {
    /// Names this continuation in its events and in `continue.cancel`.
    public var continuation: String
    /// The nearby activity being continued.
    public var nearbyID: String
    /// Its type, when a local app declared it.
    public var type: String?

    public init(continuation: String, nearbyID: String, type: String?) {
        self.continuation = continuation
        self.nearbyID = nearbyID
        self.type = type
    }
}

/// `continue.cancel`: gives up a continuation that has not finished; its
/// `continueFailed` event follows with code `cancelled`.
public struct ContinuationParams: Sendable, Codable, Hashable {
    public var continuation: String
    public init(continuation: String) { self.continuation = continuation }
}

/// An activity restored from another device: everything its app published there.
public struct ContinuedActivity: Sendable, Codable, Hashable {
    public var type: String
    public var title: String?
    public var userInfo: [String: JSONValue]?
    /// An http or https URL; where no local app handles `type`, it is what to open.
    public var webpageURL: String?
    /// The keys the origin app said a continuation must carry; all of them are in `userInfo`.
    public var requiredUserInfoKeys: [String]?
    /// The local name of the account both devices share.
    public var account: String
    /// The origin device's per-epoch identifier (hex), as in `NearbyActivity.device`.
    public var device: String

    public init(
        type: String, title: String? = nil, userInfo: [String: JSONValue]? = nil, webpageURL: String? = nil,
        requiredUserInfoKeys: [String]? = nil, account: String, device: String
    ) {
        self.type = type
        self.title = title
        self.userInfo = userInfo
        self.webpageURL = webpageURL
        self.requiredUserInfoKeys = requiredUserInfoKeys
        self.account = account
        self.device = device
    }
}

/// The `continued` event: the payload arrived, was authenticated and checked.
public struct ContinuedEvent: Sendable, Codable, Hashable {
    public var continuation: String
    public var activity: ContinuedActivity
    /// True when another connection asked for the continuation and this one gets the
    /// activity because it declared the type in `hello` (`handles`).
    public var forwarded: Bool?
    /// With `continue`'s `streams`: where the app takes its end of the stream (only in the event to the
    /// connection that sent `continue`).
    public var stream: StreamSocket?

    public init(continuation: String, activity: ContinuedActivity, forwarded: Bool? = nil, stream: StreamSocket? = nil) {
        self.continuation = continuation
        self.activity = activity
        self.forwarded = forwarded
        self.stream = stream
    }
}

/// Where an app takes its end of a continuation stream: a Unix `SOCK_STREAM` socket that accepts one
/// connection of the app's uid, within 30 s.
public struct StreamSocket: Sendable, Codable, Hashable {
    public var path: String
    public init(path: String) { self.path = path }
}

/// The `streamOpened` event, on the origin device, to the connection that published activity `id`: a
/// device of the account continued it with a stream, whose channel passed the handshake; the app
/// connects to `path` (within 30 s) for its end.
public struct StreamOpenedEvent: Sendable, Codable, Hashable {
    /// The activity's id, as `publish` returned it.
    public var id: String
    /// The socket to connect to.
    public var path: String
    /// The continuing device's per-epoch identifier (hex), as in `wasContinued`.
    public var byDevice: String

    public init(id: String, path: String, byDevice: String) {
        self.id = id
        self.path = path
        self.byDevice = byDevice
    }
}

/// The `continueFailed` event.
public struct ContinueFailedEvent: Sendable, Codable, Hashable {
    public var continuation: String
    public var nearbyID: String
    public var code: ContinueError.Code
    /// A sentence for people.
    public var message: String

    public init(continuation: String, nearbyID: String, code: ContinueError.Code, message: String) {
        self.continuation = continuation
        self.nearbyID = nearbyID
        self.code = code
        self.message = message
    }
}

/// The `wasContinued` event, on the origin device, to the connection that published
/// the activity (NSUserActivity's userActivityWasContinued).
public struct WasContinuedEvent: Sendable, Codable, Hashable {
    /// The activity's id, as `publish` returned it.
    public var id: String
    /// The continuing device's per-epoch identifier (hex).
    public var byDevice: String

    public init(id: String, byDevice: String) {
        self.id = id
        self.byDevice = byDevice
    }
}
