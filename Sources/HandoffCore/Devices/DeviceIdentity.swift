import Crypto

/// This device's long-term identity (docs/devices.md, section 2): an X25519 key
/// pair kept in a file of its own, and the name it goes by. The private key
/// never leaves the file and this value; `description` shows only the
/// public card's name and fingerprint.
public struct DeviceIdentity: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    private let privateKey: SecretBytes
    /// What other devices of the accounts learn about this one.
    public let card: DeviceCard

    /// The identity with `privateKey` (32 bytes) named `name`.
    public init(privateKey: some Collection<UInt8>, name: String) throws(DeviceCardError) {
        let raw = Array(privateKey)
        guard raw.count == 32, let key = try? Curve25519.KeyAgreement.PrivateKey(rawRepresentation: raw) else {
            throw .malformed("a private key of \(raw.count) bytes")
        }
        card = try DeviceCard(publicKey: Array(key.publicKey.rawRepresentation), name: name)
        self.privateKey = SecretBytes(raw)
    }

    /// A new identity from the system's secure generator.
    public static func generate(name: String) throws(DeviceCardError) -> DeviceIdentity {
        let key = Curve25519.KeyAgreement.PrivateKey()
        return try DeviceIdentity(privateKey: Array(key.rawRepresentation), name: name)
    }

    /// The same key under another name.
    public func renamed(to name: String) throws(DeviceCardError) -> DeviceIdentity {
        try privateKey.withUnsafeBytes { (bytes) throws(DeviceCardError) in try DeviceIdentity(privateKey: Array(bytes), name: name) }
    }

    /// `X25519(this identity's private key, publicKey)`; nil for a key that is not 32 bytes
    /// or a low-order point (docs/devices.md, section 7).
    func sharedSecret(with publicKey: [UInt8]) -> SecretBytes? {
        KeyAgreement.sharedSecret(privateKey, publicKey)
    }

    public var description: String { "DeviceIdentity(name: \(String(reflecting: card.name)), fingerprint: \(card.fingerprint))" }
    public var debugDescription: String { description }
    public var customMirror: Mirror {
        Mirror(self, children: ["name": card.name, "fingerprint": card.fingerprint], displayStyle: .struct)
    }

    // MARK: The identity file

    /// The first line of an identity file.
    public static let fileHeader = "# handoff device identity. Keep it secret: mode 0600. Format: docs/devices.md"

    /// The file's text: the header, `version = 1` and `private-key = ` 64 lowercase hex digits,
    /// each line ending in LF. The name is not in it: it comes from the configuration.
    public func fileContents() -> String {
        privateKey.withUnsafeBytes { bytes in
            "\(Self.fileHeader)\nversion = 1\nprivate-key = \(Hex.encode(bytes))\n"
        }
    }

    /// Reads an identity file's text (docs/devices.md, section 2): lines starting
    /// with `#` and empty lines are skipped; `version = 1` and `private-key = `
    /// (64 hex digits, either case) must each appear once, nothing else may.
    public init(fileContents text: String, name: String) throws(DeviceCardError) {
        var version: String?
        var key: String?
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            if line.isEmpty || line.hasPrefix("#") { continue }
            let parts = line.split(separator: "=", maxSplits: 1).map { $0.trimmingSpaces() }
            guard parts.count == 2 else { throw .malformed("line \(number + 1) is not \"key = value\"") }
            switch parts[0] {
            case "version":
                guard version == nil else { throw .malformed("line \(number + 1) repeats version") }
                version = parts[1]
            case "private-key":
                guard key == nil else { throw .malformed("line \(number + 1) repeats private-key") }
                key = parts[1]
            default:
                throw .malformed("line \(number + 1) has an unknown key")
            }
        }
        guard version == "1" else { throw .malformed(version.map { _ in "an unknown version" } ?? "no version") }
        guard let key, key.utf8.count == 64, let bytes = Hex.decode(key) else {
            throw .malformed("no private key of 64 hex digits")
        }
        try self.init(privateKey: bytes, name: name)
    }
}

extension Substring {
    fileprivate func trimmingSpaces() -> String {
        String(drop { $0 == " " || $0 == "\t" }.reversed().drop { $0 == " " || $0 == "\t" }.reversed())
    }
}
