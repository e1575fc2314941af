import Foundation
import HandoffProtocol

/// One event frame from the daemon, as it arrived.
///
/// The frame is kept whole so that events a later protocol version adds can be
/// decoded by code that knows them, and so that tools can pass the frame on
/// unchanged (`handoffctl watch --json` does).
public struct HandoffEvent: Sendable, Hashable {
    /// Which event this is.
    public let name: EventName
    /// The frame, `{"data":{…},"event":"…"}`, without its newline.
    public let line: Data

    public init(name: EventName, line: Data) {
        self.name = name
        self.line = line
    }

    /// The frame's `data` member, decoded as `type`.
    /// - Throws: `HandoffClientError.invalidResponse` naming the field at fault.
    public func data<D: Decodable>(as type: D.Type = D.self) throws -> D {
        do {
            return try WireFormat.eventData(type, from: line)
        } catch {
            throw HandoffClientError.invalidResponse("the \"\(name.rawValue)\" event: \(WireFormat.describe(error))")
        }
    }

    /// The nearby activity that `appeared`, was `updated` or was `lost`.
    /// - Throws: `HandoffClientError.invalidResponse` when the data does not decode.
    public func nearbyActivity() throws -> NearbyActivity {
        try data(as: NearbyEvent.self).activity
    }
}
