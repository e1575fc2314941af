import Crypto

/// The sub-keys of one account, each derived from the account secret with
/// HKDF-SHA256 under its own label. The raw secret is never used directly.
///
/// See docs/beacon-format.md, "Key schedule", for the exact labels.
public struct AccountKeySchedule: Sendable {
    /// HKDF salt shared by every derivation: a fixed, public domain separator.
    static let salt = Array("handoff account key schedule".utf8)

    /// The HKDF `info` label of each sub-key.
    enum Label: String, CaseIterable, Sendable {
        case recognitionTag = "handoff v1 beacon recognition tag"
        case encryption = "handoff v1 beacon encryption"
        case authentication = "handoff v1 beacon authentication"
        case activityTypeHash = "handoff v1 activity type hash"
        case payload = "handoff v1 payload sealing"
        case accountID = "handoff v1 account id"
        case deviceIdentifier = "handoff v1 device identifier"
        case stream = "handoff v1 stream"
    }

    /// Key of the per-epoch recognition tags.
    let recognitionTagKey: HMACKey
    /// Key from which each epoch's ChaCha20 key is derived.
    let encryptionKey: HMACKey
    /// Key of the beacon MAC.
    let authenticationKey: HMACKey
    /// Key of the activity type hashes.
    let activityTypeHashKey: HMACKey
    /// The account identifier.
    let accountID: AccountID
    /// Key of the known part of each device's per-epoch beacon identifier (docs/devices.md).
    let deviceIdentifierKey: HMACKey

    private let payloadKeyBytes: SecretBytes
    /// `K_stream`: the input of every continuation stream's direction keys
    /// (docs/continuation.md, section 10). Never used as a key itself.
    let streamKey: SecretBytes

    /// Key for sealing the payloads that devices exchange over GATT after a
    /// beacon was recognised. Not used by the beacon itself.
    public var payloadKey: SymmetricKey { payloadKeyBytes.withUnsafeBytes { SymmetricKey(data: $0) } }

    /// Derives every sub-key from a 32-byte secret.
    init(secret: SymmetricKey) {
        func derive(_ label: Label, bytes: Int = 32) -> SymmetricKey {
            HKDF<SHA256>.deriveKey(
                inputKeyMaterial: secret, salt: Self.salt, info: Array(label.rawValue.utf8), outputByteCount: bytes
            )
        }
        func hmacKey(_ label: Label) -> HMACKey {
            HMACKey(key: derive(label))
        }
        recognitionTagKey = hmacKey(.recognitionTag)
        encryptionKey = hmacKey(.encryption)
        authenticationKey = hmacKey(.authentication)
        activityTypeHashKey = hmacKey(.activityTypeHash)
        deviceIdentifierKey = hmacKey(.deviceIdentifier)
        payloadKeyBytes = derive(.payload).withUnsafeBytes { SecretBytes($0) }
        streamKey = derive(.stream).withUnsafeBytes { SecretBytes($0) }
        accountID = derive(.accountID, bytes: 8).withUnsafeBytes { bytes in
            AccountID(rawValue: bytes.reduce(0) { $0 << 8 | UInt64($1) })
        }
    }
}
