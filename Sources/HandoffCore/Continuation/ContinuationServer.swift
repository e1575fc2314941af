import Crypto

/// The origin side of the continuation exchange (docs/continuation.md, sections 4 and 5).
///
/// It remembers which activity each of this device's recent beacons announced, checks
/// requests in the order the spec gives, remembers request nonces against replay, and
/// seals responses. Pure state: the daemon feeds it the beacons it advertises and the
/// requests it receives, with the time.
public struct ContinuationServer: Sendable {
    /// A request that passed every check but the last: whether the activity is still current
    /// and unexpired is the daemon's to decide.
    public struct Accepted: Sendable {
        public let account: AccountID
        public let epoch: Epoch
        /// The activity the beacon announced, as given to `didAdvertise`.
        public let activity: String
        /// The continuing device's per-epoch identifier.
        public let requester: DeviceID
        /// For an introduction (docs/continuation.md, section 9), the requester's card;
        /// nil for a continuation.
        public let requesterCard: DeviceCard?
        /// For a rekey (docs/continuation.md, section 11), the sender's fingerprint and its
        /// envelope, to open with `openRekey(_:identity:roster:)`; nil for the other kinds.
        public let rekey: RekeyRequest?
        /// Whether the request said the requester takes streams (`ContinuationFormat.streamsByte`): only then
        /// may the response carry a stream offer (docs/continuation.md, sections 4 and 10.2).
        public var takesStreams: Bool { kind == ContinuationFormat.streamsByte }
        /// The chunks of the response must carry this.
        public let session: UInt32
        /// The request's first byte; the response carries it too.
        let kind: UInt8
        let requestNonce: [UInt8]
        let context: [UInt8]
        let tag: [UInt8]
        let key: SecretBytes
        /// The account key the request opened under (a rekey's envelope is bound to it).
        let accountKey: AccountKey

        /// The keys of the stream `offer` made in the response to this request (docs/continuation.md, section 10.3).
        public func streamKeys(for offer: StreamOffer) -> StreamKeys {
            StreamKeys(streamKey: accountKey.schedule.streamKey, context: context, tag: tag, requestNonce: requestNonce, offer: offer)
        }
    }

    /// What a rekey request carries besides the 26 bytes every request does.
    public struct RekeyRequest: Sendable, Hashable {
        /// The fingerprint of the device that sealed the envelope (16 hex digits).
        public let sender: String
        /// The envelope, `RekeyFormat.envelopeLength` bytes, not yet opened.
        public let envelope: [UInt8]
    }

    private struct Advertised: Sendable {
        let account: AccountKey
        let epoch: Epoch
        let device: DeviceID
        /// (sequence, activity), oldest first.
        var activities: [(sequence: UInt16, activity: String)]

        func activity(at sequence: UInt16) -> String? {
            activities.last { $0.sequence == sequence }?.activity
        }
    }

    /// Sequence numbers remembered per beacon identity (a device changes its beacon only when
    /// its current activity changes).
    public static let rememberedSequences = 256

    public let configuration: BeaconConfiguration
    /// Whether rekey requests (kind 0x12) are accepted; when false they are refused as
    /// `malformed`, as by a device that predates rekeys (docs/continuation.md, section 11).
    public var acceptsRekeys = false
    private var advertised: [[UInt8]: [Advertised]] = [:]
    private var seenNonces: [Epoch: Set<[UInt8]>] = [:]

    public init(configuration: BeaconConfiguration) {
        self.configuration = configuration
    }

    /// Records that this device advertised `payload` (its own beacon for `account`) for `activity`.
    /// Payloads that are not this account's beacon of the current epoch are ignored.
    public mutating func didAdvertise(_ payload: [UInt8], account: AccountKey, activity: String, now: Double) {
        let epoch = configuration.epoch(containing: now)
        prune(current: epoch)
        guard let fields = try? BeaconCodec.open(payload, account: account, epoch: epoch) else { return }
        let tag = Array(payload[1..<5])
        var entries = advertised[tag] ?? []
        if let index = entries.firstIndex(where: {
            $0.account.id == account.id && $0.epoch == epoch && $0.device == fields.device
        }) {
            if entries[index].activities.count >= Self.rememberedSequences {
                entries[index].activities.removeFirst()
            }
            entries[index].activities.append((fields.sequence, activity))
        } else {
            entries.append(
                Advertised(account: account, epoch: epoch, device: fields.device, activities: [(fields.sequence, activity)]))
        }
        advertised[tag] = entries
    }

    /// Checks a request, a continuation's, an introduction's or (with `acceptsRekeys`) a rekey's:
    /// they differ in the first byte, the labels, and what follows the plaintext's first 26
    /// bytes (nothing, a padded card, a fingerprint and an envelope).
    /// - Throws: the status to refuse it with.
    public mutating func accept(_ request: [UInt8], now: Double) throws(ExchangeStatus) -> Accepted {
        prune(current: configuration.epoch(containing: now))
        let kind: UInt8
        switch request.first {
        case ContinuationFormat.versionByte where request.count == ContinuationFormat.requestLength,
            ContinuationFormat.streamsByte where request.count == ContinuationFormat.requestLength,
            ContinuationFormat.introductionByte where request.count == ContinuationFormat.introductionRequestLength:
            kind = request[0]
        case ContinuationFormat.rekeyByte where acceptsRekeys && request.count == ContinuationFormat.rekeyRequestLength:
            kind = request[0]
        default:
            throw .malformed
        }
        let tag = Array(request[1..<5])
        guard let candidates = advertised[tag], !candidates.isEmpty else { throw .unknownBeacon }
        let box: ChaChaPoly.SealedBox
        do {
            box = try ChaChaPoly.SealedBox(
                nonce: ChaChaPoly.Nonce(data: request[5..<17]), ciphertext: request[17..<(request.count - 16)],
                tag: request[(request.count - 16)...])
        } catch {
            throw .malformed
        }
        for candidate in candidates {
            let context = candidate.epoch.context.bytes
            guard let plaintext = try? Array(ChaChaPoly.open(
                box, using: candidate.account.schedule.payloadKey,
                authenticating: ContinuationFormat.requestLabel(kind: kind) + context + tag))
            else { continue }
            let nonce = Array(plaintext[0..<16])
            let sequence = UInt16(plaintext[16]) << 8 | UInt16(plaintext[17])
            let origin = Self.uint32(plaintext[18..<22])
            let requester = Self.uint32(plaintext[22..<26])
            guard origin == candidate.device.rawValue, let activity = candidate.activity(at: sequence) else {
                throw .unknownBeacon
            }
            var card: DeviceCard?
            var rekey: RekeyRequest?
            if kind == ContinuationFormat.introductionByte {
                guard let decoded = try? DeviceCard(decodingPadded: plaintext[26...]) else { throw .malformed }
                card = decoded
            } else if kind == ContinuationFormat.rekeyByte {
                let envelopeStart = 26 + DeviceCard.fingerprintLength
                rekey = RekeyRequest(
                    sender: Hex.encode(plaintext[26..<envelopeStart]), envelope: Array(plaintext[envelopeStart...]))
            }
            guard !seenNonces.values.contains(where: { $0.contains(nonce) }) else { throw .replayed }
            if seenNonces.values.reduce(0, { $0 + $1.count }) < ContinuationFormat.rememberedRequests {
                seenNonces[candidate.epoch, default: []].insert(nonce)
            } else {
                // Full: refuse rather than forget, so no replay slips through; the window empties at the next epoch.
                throw .busy
            }
            return Accepted(
                account: candidate.account.id, epoch: candidate.epoch, activity: activity,
                requester: DeviceID(rawValue: requester), requesterCard: card, rekey: rekey,
                session: Self.uint32(nonce[0..<4]), kind: kind, requestNonce: nonce, context: context, tag: tag,
                key: candidate.account.schedule.payloadKey.withUnsafeBytes { SecretBytes($0) },
                accountKey: candidate.account)
        }
        throw .authenticationFailed
    }

    /// The sealed `ok` response carrying `payload`, with the request's own kind and label.
    /// - Precondition: the payload carries a stream offer only when the request takes streams
    ///   (`Accepted.takesStreams`): a requester that did not say so refuses the payload.
    public func respond(to request: Accepted, with payload: ActivityPayload, using generator: inout some RandomNumberGenerator) -> [UInt8] {
        precondition(request.requesterCard == nil && request.rekey == nil, "only a continuation is answered with an activity")
        precondition(payload.streamOffer == nil || request.takesStreams, "a stream offer only to a request that takes streams")
        return seal(payload.encoded(), kind: request.kind, label: ContinuationFormat.responseLabel(kind: request.kind),
            for: request, using: &generator)
    }

    /// The sealed `ok` response to an introduction, carrying this device's `card`.
    public func respond(to request: Accepted, introducing card: DeviceCard, using generator: inout some RandomNumberGenerator)
        -> [UInt8]
    {
        precondition(request.requesterCard != nil, "a continuation is answered with an activity")
        return seal(card.paddedEncoding(), kind: ContinuationFormat.introductionByte,
            label: ContinuationFormat.introductionResponseLabel, for: request, using: &generator)
    }

    /// `respond(to:introducing:using:)` with the system's secure generator.
    public func respond(to request: Accepted, introducing card: DeviceCard) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return respond(to: request, introducing: card, using: &generator)
    }

    func seal(
        _ plaintext: [UInt8], kind: UInt8, label: [UInt8], for request: Accepted,
        using generator: inout some RandomNumberGenerator
    ) -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: 12)
        for index in nonce.indices { nonce[index] = UInt8.random(in: .min ... .max, using: &generator) }
        let key = request.key.withUnsafeBytes { SymmetricKey(data: $0) }
        let box = try! ChaChaPoly.seal(
            plaintext, using: key, nonce: try! ChaChaPoly.Nonce(data: nonce),
            authenticating: label + request.context + request.tag + request.requestNonce)
        return [kind, ExchangeStatus.ok.rawValue] + nonce + Array(box.ciphertext) + Array(box.tag)
    }

    /// `respond(to:with:using:)` with the system's secure generator.
    public func respond(to request: Accepted, with payload: ActivityPayload) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return respond(to: request, with: payload, using: &generator)
    }

    /// A refusal: the version (or the exchange's kind byte) and the status, no body.
    public static func refusal(_ status: ExchangeStatus, kind: UInt8 = ContinuationFormat.versionByte) -> [UInt8] {
        [kind, status.rawValue]
    }

    /// Forgets beacons and nonces of epochs before the previous one.
    private mutating func prune(current: Epoch) {
        let oldest = current.advanced(by: -1)
        for (tag, entries) in advertised {
            let kept = entries.filter { $0.epoch.distance(to: oldest) <= 0 }
            advertised[tag] = kept.isEmpty ? nil : kept
        }
        for epoch in seenNonces.keys where epoch.distance(to: oldest) > 0 { seenNonces[epoch] = nil }
    }

    private static func uint32(_ bytes: ArraySlice<UInt8>) -> UInt32 {
        bytes.reduce(0) { $0 << 8 | UInt32($1) }
    }
}
