/// The remover's side of a rekey (docs/continuation.md, section 11): the request carries this
/// device's fingerprint and the envelope sealed to the origin; the response proves the origin
/// opened it.
extension PendingContinuation {
    /// Seals a rekey request delivering `envelope` to the device that sent `beacon`, a beacon
    /// recognised under `account`, the old key the envelope is bound to.
    public init(
        beacon: RecognizedBeacon, tag: [UInt8], account: AccountKey, requester: DeviceID, rekey envelope: RekeyEnvelope,
        using generator: inout some RandomNumberGenerator
    ) {
        precondition(envelope.bytes.count == RekeyFormat.envelopeLength, "a rekey envelope has a fixed length")
        // The sender's fingerprint is 16 hex digits: it was made from a card.
        self.init(
            beacon: beacon, tag: tag, account: account, requester: requester, kind: ContinuationFormat.rekeyByte,
            extra: Hex.decode(envelope.sender)! + envelope.bytes, rekey: envelope, using: &generator)
    }

    /// `init(beacon:tag:account:requester:rekey:using:)` with the beacon's own tag and the
    /// system's secure generator.
    public init(beacon: RecognizedBeacon, account: AccountKey, requester: DeviceID, rekey envelope: RekeyEnvelope) {
        var generator = SystemRandomNumberGenerator()
        self.init(
            beacon: beacon, tag: beacon.tagBytes, account: account, requester: requester, rekey: envelope,
            using: &generator)
    }

    /// Opens the reassembled response of a rekey and checks its acknowledgement: the origin
    /// opened the envelope and installed the new key.
    /// - Throws: `ExchangeError`: refused (`unknownDevice`, `invalidEnvelope`, …), malformed,
    ///   not authentic, or `invalidAcknowledgement`.
    public func openRekey(response: [UInt8]) throws(ExchangeError) {
        guard let envelope = rekey else { preconditionFailure("only a rekey's response holds an acknowledgement") }
        let plaintext = try openPlaintext(response)
        guard plaintext.count == RekeyFormat.acknowledgementLength else {
            throw .malformedResponse("an acknowledgement of \(plaintext.count) bytes")
        }
        guard KeyAgreement.equal(plaintext, envelope.acknowledgement(requestNonce: requestNonce)) else {
            throw .invalidAcknowledgement
        }
    }
}
