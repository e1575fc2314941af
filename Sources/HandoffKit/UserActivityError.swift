import Foundation
import HandoffProtocol

/// Why a `UserActivity` was not sent to handoffd: it breaks a rule of the protocol
/// (docs/protocol.md, `publish` and "Limits"). Checked before anything is sent, so
/// the daemon never sees the request.
public enum UserActivityError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The type is not a valid activity type; the reason says which rule it breaks.
    case invalidType(String, reason: String)
    /// The title takes more than `ProtocolLimits.maximumTitleBytes` bytes of UTF-8.
    case titleTooLong(bytes: Int)
    /// userInfo takes more than `ProtocolLimits.maximumUserInfoBytes` bytes as compact JSON.
    case userInfoTooLarge(bytes: Int)
    /// The webpage URL is not an `http` or `https` URL with a host.
    case unsupportedWebpageURL(String)
    /// The webpage URL is longer than `ProtocolLimits.maximumURLBytes` bytes.
    case webpageURLTooLong(bytes: Int)
    /// `requiredUserInfoKeys` names keys that userInfo does not have.
    case missingRequiredUserInfoKeys([String])
    /// The expiration date has passed.
    case expired(Date)
    /// The expiration date is more than 7 days (`UserActivity.maximumLifetime`) away.
    case expirationTooFar(Date)
    /// The activity was invalidated; it cannot become current again.
    case invalidated

    /// A sentence that says which limit was broken, and by how much.
    public var description: String {
        switch self {
        case .invalidType(let type, let reason):
            "\(String(reflecting: type)) is not a valid activity type: \(reason)"
        case .titleTooLong(let bytes):
            "the title is \(bytes) bytes; the limit is \(ProtocolLimits.maximumTitleBytes)"
        case .userInfoTooLarge(let bytes):
            "userInfo is \(bytes) bytes as JSON; the limit is \(ProtocolLimits.maximumUserInfoBytes) (3 KB)"
        case .unsupportedWebpageURL(let url):
            "the webpage URL must be an http or https URL with a host, not \(String(reflecting: url))"
        case .webpageURLTooLong(let bytes):
            "the webpage URL is \(bytes) bytes; the limit is \(ProtocolLimits.maximumURLBytes)"
        case .missingRequiredUserInfoKeys(let keys):
            "requiredUserInfoKeys names keys missing from userInfo: \(keys.joined(separator: ", "))"
        case .expired(let date):
            "the activity expired at \(date.formatted(.iso8601))"
        case .expirationTooFar(let date):
            "the expiration date \(date.formatted(.iso8601)) is more than 7 days away"
        case .invalidated:
            "the activity was invalidated"
        }
    }
}

/// The rules for activity types (docs/protocol.md, `publish`): reverse-DNS, 3 to 255
/// ASCII bytes, at least two dot-separated labels of 1 to 63 characters from
/// `A-Z a-z 0-9 - _`, each starting with a letter or digit.
enum ActivityTypeRule {
    /// Why `type` is not a valid activity type, or nil when it is.
    static func violation(in type: String) -> String? {
        let bytes = Array(type.utf8)
        guard (3...255).contains(bytes.count) else { return "it must be 3 to 255 bytes long, not \(bytes.count)" }
        let labels = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard labels.count >= 2 else { return "it needs at least two dot-separated labels, like org.example.viewing" }
        for label in labels {
            guard (1...63).contains(label.count) else { return "each label must be 1 to 63 characters long" }
            guard label.allSatisfy(isLabelByte) else { return "labels may hold only A-Z a-z 0-9 - _" }
            guard let first = label.first, isAlphanumeric(first) else {
                return "each label must start with a letter or digit"
            }
        }
        return nil
    }

    private static func isAlphanumeric(_ byte: UInt8) -> Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(byte) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(byte)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte)
    }

    private static func isLabelByte(_ byte: UInt8) -> Bool {
        isAlphanumeric(byte) || byte == UInt8(ascii: "-") || byte == UInt8(ascii: "_")
    }
}
