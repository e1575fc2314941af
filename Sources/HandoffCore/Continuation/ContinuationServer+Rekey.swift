/// The origin's side of a rekey (docs/continuation.md, section 11; docs/devices.md, section 7):
/// after `accept` passed steps 1 to 5, it finds the sender in this device's roster, opens the
/// envelope, and, once the daemon installed the new key, acknowledges it.
extension ContinuationServer {
    /// Opens the envelope of an accepted rekey request: the sender's fingerprint must name a
    /// device of `roster` (this device's roster of the account the request opened under), and
    /// the envelope must open for `identity` from that device, bound to the account's key.
    /// - Throws: `RekeyError`; refuse the request with its `status` (`unknownDevice` or `invalidEnvelope`).
    public func openRekey(
        _ accepted: Accepted, identity: DeviceIdentity, roster: DeviceRoster
    ) throws(RekeyError) -> RekeyEnvelope.Contents {
        guard let rekey = accepted.rekey else { preconditionFailure("only a rekey request carries an envelope") }
        guard let sender = roster.devices.first(where: { $0.card.fingerprint == rekey.sender })?.card else {
            throw .unknownSender
        }
        return try RekeyEnvelope.open(rekey.envelope, from: sender, to: identity, oldAccount: accepted.accountKey)
    }

    /// The sealed `ok` response to a rekey whose envelope opened to `contents`: the
    /// acknowledgement `HMAC-SHA256(K_ack, "handoff v1 rekey installed" ‖ requestNonce ‖ new account id)`.
    /// Send it once the new key is installed.
    public func respond(
        to request: Accepted, installed contents: RekeyEnvelope.Contents, using generator: inout some RandomNumberGenerator
    ) -> [UInt8] {
        precondition(request.rekey != nil, "only a rekey is answered with an acknowledgement")
        return seal(
            contents.acknowledgement(requestNonce: request.requestNonce), kind: ContinuationFormat.rekeyByte,
            label: ContinuationFormat.rekeyResponseLabel, for: request, using: &generator)
    }

    /// `respond(to:installed:using:)` with the system's secure generator.
    public func respond(to request: Accepted, installed contents: RekeyEnvelope.Contents) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return respond(to: request, installed: contents, using: &generator)
    }
}
