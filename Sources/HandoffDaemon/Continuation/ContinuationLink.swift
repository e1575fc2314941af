import HandoffCore
import HandoffProtocol

/// How two daemons exchange a continuation (docs/continuation.md): the
/// backend seam, as KDE Connect's link providers are. handoffd uses GATT over
/// BlueZ (`GattContinuationLink`); tests put two daemons on a loopback.
///
/// The daemon builds and checks the sealed bytes; a link only carries them.
public protocol ContinuationLink: Sendable {
    /// Origin side: answers written requests with `handler` until cancelled.
    func serve(_ handler: @escaping ContinuationRequestHandler) async
    /// Continuing side: writes `job`'s requests to the origin and opens its
    /// response, within `job.timeout`: an activity, or for an introduction the
    /// origin's card.
    func fetch(_ job: ContinuationJob) async -> Result<ExchangeResponse, ContinueError>
    /// Continuing side: keeps the link to `device` (the origin's BlueZ device path, as in `ContinuationJob.origin`)
    /// up until as many `releaseLink` calls came: a continuation stream rides on it (docs/continuation.md,
    /// section 10). What a fetch planned for the link (its disconnection) waits until then.
    func holdLink(_ device: String) async
    /// Ends one `holdLink`; the last one lets the link go as after a fetch.
    func releaseLink(_ device: String) async
}

extension ContinuationLink {
    /// A link that is not taken down after a fetch has nothing to hold.
    public func holdLink(_ device: String) async {}
    public func releaseLink(_ device: String) async {}
}

/// What an exchange brought back, opened.
public enum ExchangeResponse: Sendable, Equatable {
    /// A continuation's activity.
    case activity(ActivityPayload)
    /// An introduction's card of the origin device (docs/devices.md).
    case card(DeviceCard)
    /// A rekey's acknowledgement checked: the origin installed the new account key (docs/devices.md, section 7).
    case rekeyInstalled
}

extension PendingContinuation {
    /// Opens the reassembled response, as the request's kind says.
    public func openResponse(_ whole: [UInt8]) throws(ExchangeError) -> ExchangeResponse {
        if isRekey {
            try openRekey(response: whole)
            return .rekeyInstalled
        }
        return isIntroduction ? .card(try openIntroduction(response: whole)) : .activity(try open(response: whole))
    }
}

/// Answers one request with the response's notifications, or refuses it
/// with the status the continuing side reads back.
public typealias ContinuationRequestHandler =
    @Sendable (_ request: [UInt8], _ context: ContinuationRequestContext) async throws(ExchangeStatus) -> ContinuationReply

/// What the link knows about the peer that wrote a request.
public struct ContinuationRequestContext: Sendable {
    /// The link's ATT MTU, which decides the size of the notifications.
    public var mtu: Int
    /// The peer, for the log (a BlueZ device path).
    public var peer: String

    public init(mtu: Int, peer: String) {
        self.mtu = mtu
        self.peer = peer
    }
}

/// The response to one request, cut into notifications.
public struct ContinuationReply: Sendable {
    public var notifications: [[UInt8]]
    /// Runs after the last notification went out (true) or could not be sent (false).
    public var completion: @Sendable (Bool) async -> Void

    public init(notifications: [[UInt8]], completion: @escaping @Sendable (Bool) async -> Void) {
        self.notifications = notifications
        self.completion = completion
    }
}

/// One continuation to fetch, as the daemon describes it to a link.
public struct ContinuationJob: Sendable {
    /// The whole exchange, connecting included, ends by then.
    public var timeout: Duration
    /// Where the activity's newest beacon came from (a BlueZ device path); nil when it is no longer heard.
    public var origin: @Sendable () async -> String?
    /// A fresh request (new nonce) for each attempt; nil when the activity is no longer nearby.
    public var request: @Sendable () async -> PendingContinuation?
    /// Told each step (for the debug log: where the time goes).
    public var trace: @Sendable (String) -> Void
    /// Asked when a fetch succeeded: whether the link may stay up a little, for another
    /// exchange with the same device (after a continuation: a retry, a second app).
    /// An introduction's link stays only for a continuation of the same device that
    /// waits for it; otherwise it goes at once, so that it never overlaps another
    /// device's continuation of the same origin.
    public var keepsLink: @Sendable () async -> Bool

    public init(
        timeout: Duration, origin: @escaping @Sendable () async -> String?,
        request: @escaping @Sendable () async -> PendingContinuation?, trace: @escaping @Sendable (String) -> Void,
        keepsLink: @escaping @Sendable () async -> Bool = { true }
    ) {
        self.keepsLink = keepsLink
        self.timeout = timeout
        self.origin = origin
        self.request = request
        self.trace = trace
    }
}
