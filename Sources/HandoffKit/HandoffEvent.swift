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
    /// Where the frame came among the lines of its connection (1 for the first line, responses
    /// counted too; 0 for an event made by `init(name:line:)`). HandoffKit uses it to tell the
    /// events a `list` response already covers from those that came after it.
    let sequence: UInt64

    public init(name: EventName, line: Data) {
        self.init(name: name, line: line, sequence: 0)
    }

    init(name: EventName, line: Data, sequence: UInt64) {
        self.name = name
        self.line = line
        self.sequence = sequence
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
