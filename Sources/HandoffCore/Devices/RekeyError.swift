/// Why a rekey envelope could not be sealed or opened, or a removal planned (docs/devices.md, section 7).
/// No case carries key material.
public enum RekeyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The envelope is not version 1 or not exactly `RekeyFormat.envelopeLength` bytes, or its
    /// removed list is not well formed (padding not zero, a fingerprint twice).
    case malformed(String)
    /// A public key that gives no shared secret (not 32 bytes, or a low-order point).
    case invalidKey
    /// The envelope did not open: another sender, recipient or old account, or tampered with.
    case authenticationFailed
    /// More removed devices than `RekeyFormat.maximumRemoved`.
    case tooManyRemoved(Int)
    /// The envelope removes the device it is sealed to.
    case recipientRemoved
    /// The envelope removes the device that sealed it.
    case senderRemoved
    /// The new account secret is the old one.
    case unchangedKey
    /// The sender's fingerprint names no device of the recipient's roster.
    case unknownSender
    /// A removal that removes nothing.
    case nothingRemoved
    /// A fingerprint that is not 16 lowercase hex digits.
    case invalidFingerprint(String)

    public var description: String {
        switch self {
        case .malformed(let what): "malformed rekey envelope: \(what)"
        case .invalidKey: "a device public key gives no shared secret"
        case .authenticationFailed: "the rekey envelope failed authentication"
        case .tooManyRemoved(let count):
            "\(count) removed devices; a rekey removes at most \(RekeyFormat.maximumRemoved)"
        case .recipientRemoved: "the rekey removes the device it is addressed to"
        case .senderRemoved: "the rekey removes the device that sent it"
        case .unchangedKey: "the rekey's new account key is the old one"
        case .unknownSender: "the rekey's sender is not a known device of the account"
        case .nothingRemoved: "a removal must name at least one device"
        case .invalidFingerprint(let text): "\(String(reflecting: text)) is not a device fingerprint (16 hex digits)"
        }
    }

    /// The status a device refuses a rekey request with when it cannot install the envelope
    /// (docs/continuation.md, section 11): `unknownDevice` when it does not know the sender,
    /// else `invalidEnvelope`.
    public var status: ExchangeStatus {
        self == .unknownSender ? .unknownDevice : .invalidEnvelope
    }
}
