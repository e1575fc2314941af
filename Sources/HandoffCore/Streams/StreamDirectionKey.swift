import Crypto

/// The ChaCha20-Poly1305 key of one direction of one stream (docs/continuation.md, sections 10.3 and 10.4).
///
/// It seals and opens whole frames, `length(2) ‖ ciphertext ‖ tag(16)`, at a counter the caller keeps;
/// the nonce is `0x00000000 ‖ counter(8, big-endian)` and the associated data the length field. The key's
/// bytes never appear in `description`, `debugDescription` or a reflection `Mirror`.
public struct StreamDirectionKey: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Which frames this key seals and opens.
    public let direction: StreamDirection
    private let bytes: SecretBytes

    init(direction: StreamDirection, bytes: SecretBytes) {
        precondition(bytes.count == 32, "a stream key has 32 bytes")
        self.direction = direction
        self.bytes = bytes
    }

    /// The frame's nonce: four zero bytes, then the counter big-endian.
    static func nonce(counter: UInt64) -> ChaChaPoly.Nonce {
        let bytes = [0, 0, 0, 0] + (0..<8).map { UInt8(truncatingIfNeeded: counter >> (56 - 8 * $0)) }
        // 12 bytes: cannot fail.
        return try! ChaChaPoly.Nonce(data: bytes)
    }

    /// The whole frame carrying `type ‖ body` at `counter`.
    /// - Precondition: the body fits a frame (at most `StreamFormat.maximumDataLength` bytes).
    func seal(_ type: StreamFrameType, body: some Collection<UInt8>, counter: UInt64) -> [UInt8] {
        precondition(body.count <= StreamFormat.maximumDataLength, "a frame body over the limit")
        var plaintext = [type.rawValue]
        plaintext.append(contentsOf: body)
        return seal(plaintext: plaintext, counter: counter)
    }

    /// The whole frame carrying `plaintext` (a type byte and a body) at `counter`.
    func seal(plaintext: [UInt8], counter: UInt64) -> [UInt8] {
        let length = plaintext.count + StreamFormat.tagLength
        let header = [UInt8(length >> 8), UInt8(truncatingIfNeeded: length)]
        let box = withKey { key in
            // A 32-byte key and a 12-byte nonce: cannot fail.
            try! ChaChaPoly.seal(plaintext, using: key, nonce: Self.nonce(counter: counter), authenticating: header)
        }
        return header + box.ciphertext + box.tag
    }

    /// The plaintext (`type ‖ body`) of the whole frame `frame` at `counter`, or nil when it does not open.
    /// - Precondition: `frame` is a length field and as many bytes as it says, at least 17.
    func open(_ frame: [UInt8], counter: UInt64) -> [UInt8]? {
        precondition(frame.count >= StreamFormat.headerLength + StreamFormat.minimumSealedLength, "a frame too short")
        let tagStart = frame.count - StreamFormat.tagLength
        guard let box = try? ChaChaPoly.SealedBox(
            nonce: Self.nonce(counter: counter), ciphertext: frame[StreamFormat.headerLength..<tagStart],
            tag: frame[tagStart...])
        else { return nil }
        return withKey { key in
            try? Array(ChaChaPoly.open(box, using: key, authenticating: frame[0..<StreamFormat.headerLength]))
        }
    }

    /// Calls `body` with the raw key. Internal: the vector tests compare it.
    func withUnsafeBytes<R>(_ body: (UnsafeRawBufferPointer) -> R) -> R {
        bytes.withUnsafeBytes(body)
    }

    private func withKey<R>(_ body: (SymmetricKey) -> R) -> R {
        bytes.withUnsafeBytes { body(SymmetricKey(data: $0)) }
    }

    /// `StreamDirectionKey(continuing to origin)`: never the key.
    public var description: String { "StreamDirectionKey(\(direction))" }
    /// Same as `description`: never the key.
    public var debugDescription: String { description }
    /// Shows only the direction to `dump` and debuggers.
    public var customMirror: Mirror { Mirror(self, children: ["direction": direction], displayStyle: .struct) }
}
