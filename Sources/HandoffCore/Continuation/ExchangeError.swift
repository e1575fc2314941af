/// Why the continuing side could not restore a response.
public enum ExchangeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The origin refused the request.
    case refused(ExchangeStatus)
    /// The response is not version 1, is cut short, or has an unknown status.
    case malformedResponse(String)
    /// The sealed payload did not open: tampered with, or for another request.
    case authenticationFailed
    /// The payload opened but breaks the format or a limit.
    case invalidPayload(ActivityPayloadError)
    /// A chunk does not fit the exchange.
    case badChunk(String)
    /// An introduction's response opened but holds no valid device card.
    case invalidCard(DeviceCardError)
    /// A rekey's response opened but its acknowledgement is not the recipient's for this
    /// request and envelope (docs/continuation.md, section 11).
    case invalidAcknowledgement

    public var description: String {
        switch self {
        case .refused(let status): "the origin device refused: \(status)"
        case .malformedResponse(let why): "malformed response: \(why)"
        case .authenticationFailed: "the response failed authentication"
        case .invalidPayload(let error): "invalid payload: \(error)"
        case .badChunk(let why): "bad chunk: \(why)"
        case .invalidCard(let error): "\(error)"
        case .invalidAcknowledgement: "the origin device did not prove it installed the new account key"
        }
    }
}
