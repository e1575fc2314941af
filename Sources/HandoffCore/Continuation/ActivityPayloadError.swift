/// Why bytes are not a valid version 1 activity payload, or an activity cannot be one.
public enum ActivityPayloadError: Error, Sendable, Hashable, CustomStringConvertible {
    case unsupportedVersion(UInt8)
    case reservedFlags(UInt8)
    /// A length runs past the end, or bytes are left over.
    case truncated
    case trailingBytes(Int)
    case invalidType(String)
    case invalidUTF8(field: String)
    case tooLong(field: String, length: Int, limit: Int)
    case badURLScheme
    /// The stream offer (flag bit 4) does not decode (docs/continuation.md, section 10.2).
    case invalidStreamOffer(StreamOfferError)

    public var description: String {
        switch self {
        case .unsupportedVersion(let v): "payload version \(v) is not supported"
        case .reservedFlags(let f): "reserved flag bits set (0x\(String(f, radix: 16)))"
        case .truncated: "a field runs past the end"
        case .trailingBytes(let n): "\(n) bytes after the last field"
        case .invalidType(let why): "activity type: \(why)"
        case .invalidUTF8(let field): "\(field) is not valid UTF-8"
        case .tooLong(let field, let length, let limit): "\(field) is \(length) bytes; the limit is \(limit)"
        case .badURLScheme: "webpageURL is not http or https"
        case .invalidStreamOffer(let why): "stream offer: \(why)"
        }
    }
}
