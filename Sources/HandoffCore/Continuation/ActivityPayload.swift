/// Everything an app published about one activity, as the origin sends it to the
/// continuing device (docs/continuation.md, "The payload").
///
/// `userInfo` travels as the compact JSON the socket protocol measured: this module
/// does not parse JSON; the daemon checks that it is an object and carries every
/// `requiredUserInfoKeys` key before any app sees it.
public struct ActivityPayload: Sendable, Hashable {
    public static let version: UInt8 = 1
    /// Limits; the socket protocol's `ProtocolLimits` equal them (HandoffDaemonTests.LimitsTests).
    public static let maximumTitleBytes = 256
    public static let maximumUserInfoBytes = 3072
    public static let maximumURLBytes = 2048
    public static let maximumKeyBytes = 255
    public static let maximumKeyCount = 255

    public var type: ActivityType
    public var title: String?
    /// Compact JSON of an object.
    public var userInfo: [UInt8]?
    /// An http or https URL.
    public var webpageURL: String?
    public var requiredUserInfoKeys: [String]?
    /// The origin's stream offer (docs/continuation.md, section 10.2): present only in the response to a
    /// request that takes streams (`ContinuationFormat.streamsByte`), for an activity whose app takes them.
    public var streamOffer: StreamOffer?

    /// - Throws: `ActivityPayloadError` when a field is over its limit or the URL is not http(s).
    public init(
        type: ActivityType, title: String? = nil, userInfo: [UInt8]? = nil, webpageURL: String? = nil,
        requiredUserInfoKeys: [String]? = nil, streamOffer: StreamOffer? = nil
    ) throws(ActivityPayloadError) {
        self.type = type
        self.streamOffer = streamOffer
        self.title = title
        self.userInfo = userInfo
        self.webpageURL = webpageURL
        self.requiredUserInfoKeys = requiredUserInfoKeys
        try validate()
    }

    private enum Flag {
        static let title: UInt8 = 1 << 0
        static let userInfo: UInt8 = 1 << 1
        static let webpageURL: UInt8 = 1 << 2
        static let requiredKeys: UInt8 = 1 << 3
        static let streamOffer: UInt8 = 1 << 4
        /// The bits a payload may carry; `streamOffer` only in answer to a request that takes streams.
        static let all: UInt8 = 0x0f
    }

    private func validate() throws(ActivityPayloadError) {
        func check(_ field: String, _ count: Int, _ limit: Int) throws(ActivityPayloadError) {
            if count > limit { throw .tooLong(field: field, length: count, limit: limit) }
        }
        if let title { try check("title", title.utf8.count, Self.maximumTitleBytes) }
        if let userInfo { try check("userInfo", userInfo.count, Self.maximumUserInfoBytes) }
        if let webpageURL {
            try check("webpageURL", webpageURL.utf8.count, Self.maximumURLBytes)
            let lower = webpageURL.lowercased()
            guard lower.hasPrefix("https://") || lower.hasPrefix("http://") else { throw .badURLScheme }
        }
        if let keys = requiredUserInfoKeys {
            try check("requiredUserInfoKeys", keys.count, Self.maximumKeyCount)
            for key in keys { try check("a requiredUserInfoKeys key", key.utf8.count, Self.maximumKeyBytes) }
        }
    }

    /// The version 1 encoding.
    public func encoded() -> [UInt8] {
        var flags: UInt8 = 0
        if title != nil { flags |= Flag.title }
        if userInfo != nil { flags |= Flag.userInfo }
        if webpageURL != nil { flags |= Flag.webpageURL }
        if requiredUserInfoKeys != nil { flags |= Flag.requiredKeys }
        if streamOffer != nil { flags |= Flag.streamOffer }
        var out: [UInt8] = [Self.version, flags]
        func short(_ bytes: some Collection<UInt8>) {
            out.append(UInt8(truncatingIfNeeded: bytes.count >> 8))
            out.append(UInt8(truncatingIfNeeded: bytes.count))
            out.append(contentsOf: bytes)
        }
        out.append(UInt8(type.rawValue.utf8.count))
        out.append(contentsOf: type.rawValue.utf8)
        if let title { short(title.utf8) }
        if let userInfo { short(userInfo) }
        if let webpageURL { short(webpageURL.utf8) }
        if let keys = requiredUserInfoKeys {
            out.append(UInt8(keys.count))
            for key in keys {
                out.append(UInt8(key.utf8.count))
                out.append(contentsOf: key.utf8)
            }
        }
        if let streamOffer { out.append(contentsOf: streamOffer.encoded()) }
        return out
    }

    /// Decodes and validates a version 1 encoding; never traps, whatever the bytes.
    ///
    /// - Parameter allowingStreamOffer: whether flag bit 4 (a stream offer) may be set: only in the response
    ///   to a request that takes streams; otherwise it is a reserved bit, as for a device that predates streams.
    public init(decoding bytes: some Collection<UInt8>, allowingStreamOffer: Bool = false) throws(ActivityPayloadError) {
        var reader = ByteReader(Array(bytes))
        let version = try reader.byte()
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let flags = try reader.byte()
        let allowed = Flag.all | (allowingStreamOffer ? Flag.streamOffer : 0)
        guard flags & ~allowed == 0 else { throw .reservedFlags(flags) }
        let typeText = try reader.string(count: Int(try reader.byte()), field: "type")
        let type: ActivityType
        do { type = try ActivityType(typeText) } catch { throw .invalidType(error.description) }
        let title = flags & Flag.title != 0 ? try reader.string(count: try reader.uint16(), field: "title") : nil
        let userInfo = flags & Flag.userInfo != 0 ? try reader.bytes(count: try reader.uint16()) : nil
        let url = flags & Flag.webpageURL != 0 ? try reader.string(count: try reader.uint16(), field: "webpageURL") : nil
        var keys: [String]?
        if flags & Flag.requiredKeys != 0 {
            let count = Int(try reader.byte())
            var list: [String] = []
            for _ in 0..<count { list.append(try reader.string(count: Int(try reader.byte()), field: "a requiredUserInfoKeys key")) }
            keys = list
        }
        var offer: StreamOffer?
        if flags & Flag.streamOffer != 0 {
            let raw = try reader.bytes(count: StreamFormat.offerLength)
            do { offer = try StreamOffer(decoding: raw) } catch { throw .invalidStreamOffer(error) }
        }
        guard reader.remaining == 0 else { throw .trailingBytes(reader.remaining) }
        try self.init(type: type, title: title, userInfo: userInfo, webpageURL: url, requiredUserInfoKeys: keys,
            streamOffer: offer)
    }
}

/// Bounds-checked reading of a byte array.
struct ByteReader {
    private let bytes: [UInt8]
    private var offset = 0

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    var remaining: Int { bytes.count - offset }

    mutating func bytes(count: Int) throws(ActivityPayloadError) -> [UInt8] {
        guard count >= 0, count <= remaining else { throw .truncated }
        defer { offset += count }
        return Array(bytes[offset..<offset + count])
    }

    mutating func byte() throws(ActivityPayloadError) -> UInt8 { try bytes(count: 1)[0] }

    mutating func uint16() throws(ActivityPayloadError) -> Int {
        let pair = try bytes(count: 2)
        return Int(pair[0]) << 8 | Int(pair[1])
    }

    mutating func string(count: Int, field: String) throws(ActivityPayloadError) -> String {
        let raw = try bytes(count: count)
        guard let text = String(validating: raw, as: UTF8.self) else { throw .invalidUTF8(field: field) }
        return text
    }
}
