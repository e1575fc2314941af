import Crypto

/// What one device tells the other devices of its accounts about itself
/// (docs/devices.md): its long-term public key and its name.
///
/// A card travels only sealed, in the introduction exchange
/// (docs/continuation.md, section 9). Its digest feeds the device's per-epoch
/// beacon identifiers, so that devices that know the card tell whose beacon
/// they hear without connecting (docs/devices.md, section 3).
public struct DeviceCard: Sendable, Hashable, Codable {
    /// The card format version.
    public static let version: UInt8 = 1
    /// Bytes of an X25519 public key.
    public static let publicKeyLength = 32
    /// The longest name, in Unicode scalars and in UTF-8 bytes.
    public static let maximumNameLength = 64
    public static let maximumNameBytes = 200
    /// The longest encoded card.
    public static let maximumEncodedLength = 1 + publicKeyLength + 1 + maximumNameBytes
    static let digestLabel = Array("handoff v1 device card".utf8)
    static let fingerprintLabel = Array("handoff v1 device key".utf8)

    /// The device's X25519 public key (docs/devices.md, section 2).
    public let publicKey: [UInt8]
    /// The device's name, as its owner set it.
    public let name: String

    /// A card; `name` must pass `validate(name:)`.
    public init(publicKey: [UInt8], name: String) throws(DeviceCardError) {
        guard publicKey.count == Self.publicKeyLength else { throw .malformed("a public key of \(publicKey.count) bytes") }
        try Self.validate(name: name)
        self.publicKey = publicKey
        self.name = name
    }

    /// `version(1) ‖ publicKey(32) ‖ nameLength(1) ‖ name`.
    public func encoded() -> [UInt8] {
        let name = Array(name.utf8)
        return [Self.version] + publicKey + [UInt8(name.count)] + name
    }

    /// Decodes exactly one card: no trailing bytes.
    public init(decoding bytes: some Collection<UInt8>) throws(DeviceCardError) {
        let bytes = Array(bytes)
        guard let version = bytes.first else { throw .malformed("no bytes") }
        guard version == Self.version else { throw .malformed("version \(version)") }
        guard bytes.count >= 1 + Self.publicKeyLength + 1 else { throw .malformed("\(bytes.count) bytes") }
        let length = Int(bytes[1 + Self.publicKeyLength])
        let start = 2 + Self.publicKeyLength
        guard bytes.count == start + length else {
            throw .malformed("\(bytes.count) bytes for a name of \(length)")
        }
        guard let name = String(validating: bytes[start...], as: UTF8.self) else { throw .malformed("a name that is not UTF-8") }
        try self.init(publicKey: Array(bytes[1...Self.publicKeyLength]), name: name)
    }

    /// The card followed by zero bytes up to `maximumEncodedLength`: what an
    /// introduction carries, so that its length says nothing about the name.
    public func paddedEncoding() -> [UInt8] {
        let bytes = encoded()
        return bytes + [UInt8](repeating: 0, count: Self.maximumEncodedLength - bytes.count)
    }

    /// Decodes a padded card: exactly `maximumEncodedLength` bytes, the padding all zero.
    public init(decodingPadded bytes: some Collection<UInt8>) throws(DeviceCardError) {
        let bytes = Array(bytes)
        guard bytes.count == Self.maximumEncodedLength else { throw .malformed("\(bytes.count) padded bytes") }
        guard bytes.count > 1 + Self.publicKeyLength else { throw .malformed("\(bytes.count) bytes") }
        let end = 2 + Self.publicKeyLength + Int(bytes[1 + Self.publicKeyLength])
        guard end <= bytes.count, bytes[end...].allSatisfy({ $0 == 0 }) else { throw .malformed("padding that is not zero") }
        try self.init(decoding: bytes[..<end])
    }

    /// SHA-256("handoff v1 device card" ‖ encoded card), first 16 bytes: changes
    /// with the name, so a renamed device is introduced again.
    public var digest: [UInt8] {
        Array(SHA256.hash(data: Self.digestLabel + encoded()).prefix(16))
    }

    /// SHA-256("handoff v1 device key" ‖ public key), first 8 bytes as 16 hex
    /// digits: the device's lasting identity, shown by `handoffctl devices`.
    public var fingerprint: String {
        Hex.encode(fingerprintBytes)
    }

    /// The fingerprint's 8 bytes, as rekey envelopes and requests carry them (docs/devices.md, section 7).
    public var fingerprintBytes: [UInt8] {
        Array(SHA256.hash(data: Self.fingerprintLabel + publicKey).prefix(Self.fingerprintLength))
    }

    /// Bytes of a fingerprint.
    public static let fingerprintLength = 8

    /// Checks a device name (docs/devices.md, section 2): 1 to 64 Unicode scalars
    /// and at most 200 UTF-8 bytes, first and last not White_Space, no control
    /// character (U+0000–U+001F, U+007F–U+009F) or line/paragraph separator.
    public static func validate(name: String) throws(DeviceCardError) {
        let scalars = name.unicodeScalars
        guard let first = scalars.first, let last = scalars.last else { throw .invalidName("it is empty") }
        guard scalars.count <= maximumNameLength, name.utf8.count <= maximumNameBytes else {
            throw .invalidName("it is longer than \(maximumNameLength) characters or \(maximumNameBytes) bytes")
        }
        guard !AccountKey.isWhiteSpace(first), !AccountKey.isWhiteSpace(last) else {
            throw .invalidName("it starts or ends with white space")
        }
        for scalar in scalars {
            switch scalar.value {
            case 0x00...0x1F, 0x7F...0x9F, 0x2028, 0x2029: throw .invalidName("it contains a control character or line break")
            default: break
            }
        }
    }
}

extension DeviceCard {
    private enum CodingKeys: String, CodingKey { case publicKey, name }

    /// `{"publicKey": 64 hex digits, "name": …}`, checked as `init(publicKey:name:)` checks.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let hex = try container.decode(String.self, forKey: .publicKey)
        guard let key = Hex.decode(hex) else {
            throw DecodingError.dataCorruptedError(forKey: .publicKey, in: container, debugDescription: "not hex")
        }
        try self.init(publicKey: key, name: container.decode(String.self, forKey: .name))
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(Hex.encode(publicKey), forKey: .publicKey)
        try container.encode(name, forKey: .name)
    }
}

/// Why a device card or name was refused.
public enum DeviceCardError: Error, Sendable, Hashable, CustomStringConvertible {
    case malformed(String)
    case invalidName(String)

    public var description: String {
        switch self {
        case .malformed(let what): "malformed device card: \(what)"
        case .invalidName(let why): "invalid device name: \(why)"
        }
    }
}
