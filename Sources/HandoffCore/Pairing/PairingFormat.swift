/// Constants of the pairing protocol (docs/pairing.md).
public enum PairingFormat {
    /// The first byte of every message: pairing protocol version 1 in the high nibble.
    public static let versionByte: UInt8 = 0x10
    /// The header of the pairing advertisement: high nibble 3, low nibble 0.
    public static let advertisementHeader: UInt8 = 0x30
    /// Length of the pairing advertisement's Manufacturer Specific Data (after the company ID).
    public static let advertisementLength = 9
    /// Length of the random pairing id.
    public static let pairingIDLength = 8
    /// Length of each nonce.
    public static let nonceLength = 16
    /// How long one attempt may last, on either side.
    public static let timeoutSeconds = 120

    /// The GATT primary service "handoff pairing".
    public static let serviceUUID = "905d1f68-454b-4f44-86e0-51cab6724318"
    /// The to-offerer characteristic (`write`): messages from the joiner.
    public static let toOffererCharacteristicUUID = "afa4b83e-31c9-47f4-aed3-bbfdc37bcc90"
    /// The to-joiner characteristic (`notify`): messages from the offerer, in chunks.
    public static let toJoinerCharacteristicUUID = "a5c2a84e-421a-4512-85a5-7579b531ab5f"

    /// The message types (the second byte).
    public enum MessageType: UInt8, Sendable {
        case start = 0x01
        case commit = 0x02
        case nonceJ = 0x03
        case nonceO = 0x04
        case confirm = 0x05
        case account = 0x06
        case done = 0x07
        case failed = 0x0F
    }

    static let commitLabel = Array("handoff v1 pairing commitment".utf8)
    static let numberLabel = Array("handoff v1 pairing number".utf8)
    static let transcriptLabel = Array("handoff v1 pairing transcript".utf8)
    static let confirmKeyLabel = Array("handoff v1 pairing confirmation key".utf8)
    static let sealKeyLabel = Array("handoff v1 pairing account sealing key".utf8)
    static let joinerConfirmsLabel = Array("handoff v1 pairing joiner confirms".utf8)
    static let joinerStoredLabel = Array("handoff v1 pairing joiner stored the key".utf8)
    static let accountLabel = Array("handoff v1 pairing account".utf8)

    /// The `failed` message carrying `code`.
    public static func failedMessage(_ code: PairingFailure) -> [UInt8] {
        [versionByte, MessageType.failed.rawValue, code.rawValue]
    }

    /// The code of a `failed` message, or nil when `message` is not one.
    public static func failure(in message: [UInt8]) -> PairingFailure? {
        guard message.count == 3, message[0] == versionByte, message[1] == MessageType.failed.rawValue else {
            return nil
        }
        return PairingFailure(rawValue: message[2]) ?? .malformed
    }
}

/// Why a pairing attempt ended (docs/pairing.md, section 6). The raw value is
/// the code of the `failed` message and of the ATT application error `0x80 + code`.
public enum PairingFailure: UInt8, Error, Sendable, CaseIterable, CustomStringConvertible {
    case malformed = 1
    case unexpected = 2
    case commitmentMismatch = 3
    case confirmationFailed = 4
    case refused = 5
    case timeout = 6
    case busy = 7
    case cancelled = 8
    case conflict = 9
    case authenticationFailed = 10

    /// The socket protocol's name (docs/protocol.md, `pairFailed`).
    public var name: String {
        switch self {
        case .malformed: "malformed"
        case .unexpected: "unexpected"
        case .commitmentMismatch: "commitment-mismatch"
        case .confirmationFailed: "confirmation-failed"
        case .refused: "refused"
        case .timeout: "timeout"
        case .busy: "busy"
        case .cancelled: "cancelled"
        case .conflict: "conflict"
        case .authenticationFailed: "authentication-failed"
        }
    }

    public var description: String { name }
}

/// The short-lived pairing advertisement (docs/pairing.md, section 2): `0x30 ‖ pairingID(8)`.
public struct PairingAdvertisement: Sendable, Equatable {
    public let pairingID: [UInt8]

    public init(pairingID: [UInt8]) {
        precondition(pairingID.count == PairingFormat.pairingIDLength, "a pairing id has 8 bytes")
        self.pairingID = pairingID
    }

    /// A fresh random pairing id.
    public init(using generator: inout some RandomNumberGenerator) {
        self.init(pairingID: randomBytes(PairingFormat.pairingIDLength, using: &generator))
    }

    /// Reads Manufacturer Specific Data (after the company ID); nil unless it is exactly a pairing advertisement.
    public init?(payload: [UInt8]) {
        guard payload.count == PairingFormat.advertisementLength, payload[0] == PairingFormat.advertisementHeader else {
            return nil
        }
        pairingID = Array(payload[1...])
    }

    /// The Manufacturer Specific Data after the company ID.
    public var payload: [UInt8] { [PairingFormat.advertisementHeader] + pairingID }

    /// The chunk session of the offerer's notifications: the pairing id's first 4 bytes.
    public var session: UInt32 {
        UInt32(pairingID[0]) << 24 | UInt32(pairingID[1]) << 16 | UInt32(pairingID[2]) << 8 | UInt32(pairingID[3])
    }
}

/// The 6-digit number both users compare.
public struct PairingNumber: Sendable, Equatable, CustomStringConvertible {
    /// 0 ..< 1,000,000.
    public let value: UInt32

    public init(value: UInt32) {
        precondition(value < 1_000_000, "a pairing number has 6 digits")
        self.value = value
    }

    /// Six digits, leading zeros kept.
    public var description: String {
        let digits = String(value)
        return String(repeating: "0", count: 6 - digits.count) + digits
    }
}

func randomBytes(_ count: Int, using generator: inout some RandomNumberGenerator) -> [UInt8] {
    (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
}
