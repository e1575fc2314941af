/// Why a continue failed: the one name for it, in handoffd, HandoffKit and
/// handoffctl. One case per `Code` of the `continueFailed` event, each with
/// the daemon's message (a sentence for people).
///
/// ```swift
/// do {
///     let restored = try await client.continue(nearby)
/// } catch ContinueError.outOfRange {
///     showMessage("Your other laptop is out of range")
/// } catch let error as ContinueError {
///     showMessage(error.description)
/// }
/// ```
public enum ContinueError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The origin device is no longer heard, or could not be connected to.
    case outOfRange(String)
    /// The origin device did not answer within the `continue` timeout.
    case timeout(String)
    /// The origin device refused: the activity is no longer current there, has
    /// expired, or the request failed its authentication.
    case rejected(String)
    /// No app on this machine declares the type, and the activity has no webpage URL.
    case noHandler(String)
    /// The payload failed authentication, was malformed or over a limit, or lacks one
    /// of its required userInfo keys. Nothing of it was handed over.
    case payloadInvalid(String)
    /// The daemon cancelled it: `continue.cancel` from this client, or handoffd stopped.
    /// (Cancelling the task that awaits `continue` throws `CancellationError` instead.)
    case cancelled(String)
    /// `continue` asked for a stream, and there is none: the origin app does not take streams, the origin
    /// made no offer, or a limit on open streams was reached (the message names it).
    case streamsUnsupported(String)

    /// The error for a `continueFailed` event.
    public init(_ event: ContinueFailedEvent) {
        self.init(code: event.code, message: event.message)
    }

    /// The error for `code`, with the daemon's `message`.
    public init(_ code: Code, _ message: String) { self.init(code: code, message: message) }

    /// The error for `code`, with the daemon's `message`.
    public init(code: Code, message: String) {
        switch code {
        case .outOfRange: self = .outOfRange(message)
        case .timeout: self = .timeout(message)
        case .rejected: self = .rejected(message)
        case .noHandler: self = .noHandler(message)
        case .payloadInvalid: self = .payloadInvalid(message)
        case .cancelled: self = .cancelled(message)
        case .streamsUnsupported: self = .streamsUnsupported(message)
        }
    }

    /// The protocol's code for this failure.
    public var code: Code {
        switch self {
        case .outOfRange: .outOfRange
        case .timeout: .timeout
        case .rejected: .rejected
        case .noHandler: .noHandler
        case .payloadInvalid: .payloadInvalid
        case .cancelled: .cancelled
        case .streamsUnsupported: .streamsUnsupported
        }
    }

    /// The daemon's message.
    public var message: String {
        switch self {
        case .outOfRange(let message), .timeout(let message), .rejected(let message), .noHandler(let message),
            .payloadInvalid(let message), .cancelled(let message), .streamsUnsupported(let message):
            message
        }
    }

    /// What the code means, then the daemon's message and the code:
    /// `the other device is out of range: … (out-of-range)`.
    public var description: String {
        message.isEmpty ? "\(code.meaning) (\(code.rawValue))" : "\(code.meaning): \(message) (\(code.rawValue))"
    }
}

extension ContinueError.Code {
    /// What the code means, in a few words for people.
    public var meaning: String {
        switch self {
        case .outOfRange: "the other device is out of range"
        case .timeout: "the other device did not answer in time"
        case .rejected: "the other device refused to hand the activity over"
        case .noHandler: "no app on this laptop handles this activity, and it has no web page to open"
        case .payloadInvalid: "the activity that arrived was invalid, so nothing was restored"
        case .cancelled: "the continuation was cancelled"
        case .streamsUnsupported: "no continuation stream could be opened with the other device"
        }
    }
}

extension ContinueError {
    /// The `code` of a `continueFailed` event: why a continuation failed
    /// (NSUserActivity's didFailToContinue).
    public enum Code: String, Sendable, Codable, CaseIterable {
        /// The origin device is no longer heard, or could not be connected to.
        case outOfRange = "out-of-range"
        /// The origin device did not answer within the `continue` timeout.
        case timeout
        /// The origin device refused: the activity is no longer current there, has expired,
        /// or the request failed its authentication.
        case rejected
        /// No local app handles the type, and the activity has no webpage URL to open.
        case noHandler = "no-handler"
        /// The payload failed authentication, was malformed, over a limit, or lacks one of
        /// its `requiredUserInfoKeys`. Nothing of it is handed over.
        case payloadInvalid = "payload-invalid"
        /// `continue.cancel`, the requesting connection closed, or the daemon stopped.
        case cancelled
        /// `continue` asked for `streams`, and the origin app does not take them, the origin made no
        /// offer, or a limit on open streams was reached.
        case streamsUnsupported = "streams-unsupported"
    }
}
