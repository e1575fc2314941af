import Foundation
import HandoffProtocol

extension ContinuedActivity {
    /// `webpageURL` as a URL, when it is an `http` or `https` URL (the only schemes
    /// Handoff carries; anything else is nil and should not be opened).
    public var webpage: URL? {
        guard let webpageURL, let url = URL(string: webpageURL), WebpageURL.isAllowed(url) else { return nil }
        return url
    }

    /// The whole `userInfo` decoded as an app's own `Decodable` type, the
    /// counterpart of `UserActivity.setUserInfo(_:)` on the publishing side.
    ///
    /// ```swift
    /// struct Reading: Codable { var url: String; var scroll: Double }
    /// let reading = try restored.userInfo(as: Reading.self)
    /// ```
    /// - Throws: `DecodingError` when `userInfo` does not have that shape (an absent
    ///   `userInfo` reads as `{}`).
    public func userInfo<T: Decodable>(as type: T.Type) throws -> T {
        try JSONValue.object(userInfo ?? [:]).decode(as: type)
    }
}

extension JSONValue {
    /// Any `Encodable` value as JSON (for example an app's state struct, to put in `userInfo`).
    /// - Throws: `EncodingError` when the value does not encode.
    public init<T: Encodable>(encoding value: T) throws {
        let data = try JSONEncoder().encode(value)
        self = try JSONDecoder().decode(JSONValue.self, from: data)
    }

    /// This value decoded as `type`.
    /// - Throws: `DecodingError` when it does not have that shape.
    public func decode<T: Decodable>(as type: T.Type) throws -> T {
        let data = try WireFormat.compactJSON(self)
        return try JSONDecoder().decode(type, from: data)
    }
}

/// The rule for webpage URLs (docs/protocol.md, `publish`): `http` or `https`, with a host.
enum WebpageURL {
    static func isAllowed(_ url: URL) -> Bool {
        guard let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https" else { return false }
        return url.host?.isEmpty == false
    }
}
