import Crypto

/// The continuing side of one exchange (docs/continuation.md, sections 4 and 5): it
/// builds the sealed request for a recognised beacon, then opens the origin's response.
///
/// With `introducing`, the exchange is an introduction instead (section 9): the
/// request carries this device's card and the response the origin's. A rekey
/// (`init(beacon:tag:account:requester:rekey:using:)`, section 11) carries an envelope.
public struct PendingContinuation: Sendable {
    /// The request to write to the origin's request characteristic.
    public let request: [UInt8]
    /// Whether this is an introduction (the first byte of request and response).
    public var isIntroduction: Bool { kind == ContinuationFormat.introductionByte }
    /// Whether this is a rekey (docs/continuation.md, section 11).
    public var isRekey: Bool { kind == ContinuationFormat.rekeyByte }
    /// Whether the request said this device takes streams, so the response may carry a stream offer.
    public var takesStreams: Bool { kind == ContinuationFormat.streamsByte }
    private let kind: UInt8
    /// For a rekey, the envelope the request carries (its recipient's acknowledgement is checked).
    let rekey: RekeyEnvelope?
    /// The chunks of the answer carry this (the request nonce's first 4 bytes).
    public let session: UInt32
    let requestNonce: [UInt8]
    private let context: [UInt8]
    private let tag: [UInt8]
    private let key: SecretBytes
    /// `K_stream` of the account (docs/continuation.md, section 10.3), for a response's stream offer.
    private let streamKey: SecretBytes

    /// Seals a request for the activity that `beacon` announced.
    ///
    /// - Parameters:
    ///   - beacon: the recognised beacon; its epoch, sequence and device name the activity.
    ///   - tag: the beacon's recognition tag, bytes 1..<5 of its payload.
    ///   - account: the key that recognised it.
    ///   - requester: this device's per-epoch identifier, which the origin app is told.
    ///   - introducing: this device's card, for an introduction; nil for a continuation.
    ///   - takesStreams: for a continuation, whether to ask with the kind that takes streams
    ///     (`ContinuationFormat.streamsByte`, docs/continuation.md section 4), so that the response may carry
    ///     a stream offer. Ask so only when the beacon carried `supportsStreams`: a device that predates
    ///     streams refuses the kind as `malformed`, and never sets that flag.
    public init(
        beacon: RecognizedBeacon, tag: [UInt8], account: AccountKey, requester: DeviceID,
        introducing card: DeviceCard? = nil, takesStreams: Bool = false, using generator: inout some RandomNumberGenerator
    ) {
        precondition(card == nil || !takesStreams, "an introduction carries no stream")
        let kind = card != nil
            ? ContinuationFormat.introductionByte
            : takesStreams ? ContinuationFormat.streamsByte : ContinuationFormat.versionByte
        self.init(
            beacon: beacon, tag: tag, account: account, requester: requester,
            kind: kind, extra: card?.paddedEncoding() ?? [], rekey: nil, using: &generator)
    }

    /// The request of any kind: `extra` follows the 26 bytes every plaintext starts with.
    init(
        beacon: RecognizedBeacon, tag: [UInt8], account: AccountKey, requester: DeviceID, kind: UInt8,
        extra: [UInt8], rekey: RekeyEnvelope?, using generator: inout some RandomNumberGenerator
    ) {
        precondition(tag.count == 4, "a recognition tag has 4 bytes")
        var nonce = [UInt8](repeating: 0, count: ContinuationFormat.requestNonceLength)
        for index in nonce.indices { nonce[index] = UInt8.random(in: .min ... .max, using: &generator) }
        var aeadNonce = [UInt8](repeating: 0, count: 12)
        for index in aeadNonce.indices { aeadNonce[index] = UInt8.random(in: .min ... .max, using: &generator) }
        let context = beacon.epoch.context.bytes
        var plaintext = nonce
        plaintext += [UInt8(beacon.sequence >> 8), UInt8(truncatingIfNeeded: beacon.sequence)]
        plaintext += Self.bigEndian(beacon.device.rawValue)
        plaintext += Self.bigEndian(requester.rawValue)
        plaintext += extra
        self.kind = kind
        let key = account.schedule.payloadKey
        // Sealing with a 12-byte nonce cannot fail.
        let box = try! ChaChaPoly.seal(
            plaintext, using: key, nonce: try! ChaChaPoly.Nonce(data: aeadNonce),
            authenticating: ContinuationFormat.requestLabel(kind: kind) + context + tag)
        request = [kind] + tag + aeadNonce + Array(box.ciphertext) + Array(box.tag)
        session = UInt32(nonce[0]) << 24 | UInt32(nonce[1]) << 16 | UInt32(nonce[2]) << 8 | UInt32(nonce[3])
        requestNonce = nonce
        self.context = context
        self.tag = tag
        self.key = key.withUnsafeBytes { SecretBytes($0) }
        streamKey = account.schedule.streamKey
        self.rekey = rekey
    }

    /// `init(beacon:tag:account:requester:introducing:using:)` with the system's secure generator.
    public init(
        beacon: RecognizedBeacon, tag: [UInt8], account: AccountKey, requester: DeviceID, introducing card: DeviceCard? = nil,
        takesStreams: Bool = false
    ) {
        var generator = SystemRandomNumberGenerator()
        self.init(
            beacon: beacon, tag: tag, account: account, requester: requester, introducing: card, takesStreams: takesStreams,
            using: &generator)
    }

    /// A request for `beacon`, with the tag it carried and the system's secure generator.
    public init(
        beacon: RecognizedBeacon, account: AccountKey, requester: DeviceID, introducing card: DeviceCard? = nil,
        takesStreams: Bool = false
    ) {
        self.init(
            beacon: beacon, tag: beacon.tagBytes, account: account, requester: requester, introducing: card,
            takesStreams: takesStreams)
    }

    /// Opens the reassembled response of a continuation.
    /// - Throws: `ExchangeError`: refused, malformed, not authentic, or an invalid payload.
    ///
    /// The payload carries a stream offer only when this request takes streams (`takesStreams`); otherwise
    /// an offer's flag is a reserved bit (`invalidPayload`), as for a device that predates streams.
    public func open(response: [UInt8]) throws(ExchangeError) -> ActivityPayload {
        precondition(
            kind == ContinuationFormat.versionByte || kind == ContinuationFormat.streamsByte,
            "only a continuation's response holds an activity")
        let plaintext = try openPlaintext(response)
        do { return try ActivityPayload(decoding: plaintext, allowingStreamOffer: takesStreams) } catch {
            throw .invalidPayload(error)
        }
    }

    /// The keys of the stream `offer` (from this exchange's response) opens (docs/continuation.md, section 10.3).
    public func streamKeys(for offer: StreamOffer) -> StreamKeys {
        precondition(takesStreams, "only a request that takes streams gets an offer")
        return StreamKeys(streamKey: streamKey, context: context, tag: tag, requestNonce: requestNonce, offer: offer)
    }

    /// Opens the reassembled response of an introduction: the origin's card.
    /// - Throws: `ExchangeError`: refused, malformed, not authentic, or an invalid card.
    public func openIntroduction(response: [UInt8]) throws(ExchangeError) -> DeviceCard {
        precondition(isIntroduction, "a continuation's response holds an activity")
        let plaintext = try openPlaintext(response)
        do { return try DeviceCard(decodingPadded: plaintext) } catch { throw .invalidCard(error) }
    }

    func openPlaintext(_ response: [UInt8]) throws(ExchangeError) -> [UInt8] {
        guard response.count >= 2 else { throw .malformedResponse("\(response.count) bytes") }
        guard response[0] == kind else {
            throw .malformedResponse("version byte 0x\(String(response[0], radix: 16))")
        }
        guard let status = ExchangeStatus(rawValue: response[1]) else {
            throw .malformedResponse("unknown status \(response[1])")
        }
        guard status == .ok else {
            guard response.count == 2 else { throw .malformedResponse("a refusal with a body") }
            throw .refused(status)
        }
        guard response.count >= 2 + 12 + 16 else { throw .malformedResponse("\(response.count) bytes") }
        do {
            let box = try ChaChaPoly.SealedBox(
                nonce: ChaChaPoly.Nonce(data: response[2..<14]), ciphertext: response[14..<(response.count - 16)],
                tag: response[(response.count - 16)...])
            let key = self.key.withUnsafeBytes { SymmetricKey(data: $0) }
            let label = ContinuationFormat.responseLabel(kind: kind)
            return Array(try ChaChaPoly.open(box, using: key, authenticating: label + context + tag + requestNonce))
        } catch {
            throw .authenticationFailed
        }
    }

    static func bigEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value >> 24), UInt8(truncatingIfNeeded: value >> 16), UInt8(truncatingIfNeeded: value >> 8),
         UInt8(truncatingIfNeeded: value)]
    }
}
