/// The machine-readable part of an error response. Every code is listed, with
/// when it is sent, in docs/protocol.md.
public enum ErrorCode: String, Sendable, Codable, CaseIterable {
    /// The line is not valid JSON, or not a JSON object.
    case invalidJSON = "invalid-json"
    /// The line is longer than `ProtocolLimits.maximumLineLength`.
    case lineTooLong = "line-too-long"
    /// The request has no `method`, or one the daemon does not know.
    case unknownMethod = "unknown-method"
    /// A parameter is missing, of the wrong type, or out of range.
    case invalidParams = "invalid-params"
    /// `hello` offered no version this daemon speaks.
    case unsupportedVersion = "unsupported-version"
    /// A request other than `hello` came before `hello`.
    case helloRequired = "hello-required"
    /// `userInfo`, `title` or `webpageURL` is over its limit.
    case payloadTooLarge = "payload-too-large"
    /// The client already has the most activities it may publish.
    case tooManyActivities = "too-many-activities"
    /// The daemon already serves the most clients it may; sent before closing.
    case tooManyClients = "too-many-clients"
    /// No such activity, nearby activity or account.
    case notFound = "not-found"
    /// The caller's uid may not do this.
    case permissionDenied = "permission-denied"
    /// Publishing needs an account the caller may use, and there is none.
    case noAccount = "no-account"
    /// The request is well-formed but conflicts with the current state (a duplicate name, …).
    case conflict
    /// The daemon failed; the message says how.
    case `internal`
}

/// An error response: a code and a sentence for people.
public struct ProtocolError: Error, Sendable, Codable, Hashable, CustomStringConvertible {
    public var code: ErrorCode
    public var message: String

    public init(_ code: ErrorCode, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { "\(message) (\(code.rawValue))" }
}
