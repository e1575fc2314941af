import Foundation
@testable import HandoffCore

/// A deterministic generator (SplitMix64) so tests that draw randomness are reproducible.
struct SeededGenerator: RandomNumberGenerator {
    var state: UInt64

    init(seed: UInt64) {
        state = seed
    }

    mutating func next() -> UInt64 {
        state &+= 0x9E37_79B9_7F4A_7C15
        var z = state
        z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
        z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
        return z ^ (z >> 31)
    }
}

/// Test inputs shared by several suites.
enum Fixture {
    static let secretA: [UInt8] = Array(0..<32)
    static let accountA = try! AccountKey(name: "Vector A", secret: secretA)
    static let accountB = try! AccountKey(name: "Other", secret: [UInt8](repeating: 0xB0, count: 32))
    static let browse = try! ActivityType("org.handoff.example.browse")
    static let edit = try! ActivityType("org.handoff.example.edit")
    /// Middle of epoch 2_900_000 (600-second epochs).
    static let epoch = Epoch(index: 2_900_000, length: 600)
    static let now = Double(epoch.startSeconds) + 300

    static func seconds(in epoch: Epoch) -> Double { Double(epoch.startSeconds) + Double(epoch.length) / 2 }

    static func fields(
        epoch: Epoch = Fixture.epoch, slot: UInt8 = 3, sequence: UInt16 = 0x1234,
        device: UInt32 = 0xdead_beef, account: AccountKey = Fixture.accountA
    ) -> BeaconFields {
        BeaconFields(
            headerNibble: 5, epoch: epoch, slot: slot, salt: 0xa1b2c3, typeHash: browse.hash(for: account),
            flags: [.hasPayload], sequence: sequence, device: DeviceID(rawValue: device)
        )
    }
}

/// Decoding helpers for tests.
func bytes(hex: String) -> [UInt8] {
    guard let decoded = Hex.decode(hex) else { fatalError("bad hex in test: \(hex)") }
    return decoded
}

/// The checked-in vectors (Vectors/beacon-v1.json).
struct VectorFile: Decodable, Sendable {
    struct Beacon: Decodable, Sendable {
        struct Subkeys: Decodable, Sendable {
            let recognitionTag: String
            let encryption: String
            let authentication: String
            let activityTypeHash: String
            let payload: String
        }

        let name: String
        let accountSecret: String
        let epochLength: UInt32
        let epochIndex: UInt64
        let activityType: String
        let slot: UInt8
        let salt: String
        let headerNibble: UInt8
        let deviceID: String
        let sequence: UInt16
        let flags: UInt8
        let accountID: String
        let subkeys: Subkeys
        let epochContext: String
        let recognitionTagInput: String
        let recognitionTag: String
        let epochEncryptionKey: String
        let typeHash: String
        let keystream: String
        let payload: String
        let advertisingData: String

        var account: AccountKey { try! AccountKey(name: "vector", secret: bytes(hex: accountSecret)) }
        var epoch: Epoch { Epoch(index: epochIndex, length: epochLength) }
        var type: ActivityType { try! ActivityType(activityType) }
        var fields: BeaconFields {
            BeaconFields(
                headerNibble: headerNibble, epoch: epoch, slot: slot, salt: UInt32(salt, radix: 16)!,
                typeHash: ActivityTypeHash(rawValue: UInt32(typeHash, radix: 16)!), flags: BeaconFlags(rawValue: flags),
                sequence: sequence, device: DeviceID(rawValue: UInt32(deviceID, radix: 16)!)
            )
        }
    }

    struct ExportCode: Decodable, Sendable {
        let accountSecret: String
        let code: String
    }

    struct KeyFile: Decodable, Sendable {
        let name: String
        let created: UInt64
        let accountSecret: String
        let text: String
    }

    /// An input to the export code decoder and its outcome: the secret's hex, or an error label.
    struct ExportCodeInput: Decodable, Sendable {
        let name: String
        let input: String
        let result: String
    }

    /// What a key file text parses to: the key, or an error label.
    enum KeyFileResult: Decodable, Sendable, Equatable {
        case parsed(name: String, created: UInt64, accountSecret: String)
        case error(String)

        private enum Keys: String, CodingKey { case name, created, accountSecret }

        init(from decoder: any Decoder) throws {
            if let label = try? decoder.singleValueContainer().decode(String.self) {
                self = .error(label)
                return
            }
            let container = try decoder.container(keyedBy: Keys.self)
            self = .parsed(
                name: try container.decode(String.self, forKey: .name), created: try container.decode(UInt64.self, forKey: .created),
                accountSecret: try container.decode(String.self, forKey: .accountSecret))
        }
    }

    struct KeyFileInput: Decodable, Sendable {
        let name: String
        let text: String
        let result: KeyFileResult
    }

    struct Advertisement: Decodable, Sendable {
        let payload: String
        let companyID: UInt16
        let advertisingData: String
    }

    struct ReplayStep: Decodable, Sendable {
        let sequence: UInt16
        let accepted: Bool
    }

    /// Payloads received in turn by one receiver that knows one account.
    struct Reception: Decodable, Sendable {
        struct Step: Decodable, Sendable {
            let payload: String
            /// `accepted <sequence>` or the rejection's label.
            let result: String
        }

        let name: String
        let accountSecret: String
        let epochLength: UInt32
        let receiverEpochIndex: UInt64
        let receptions: [Step]
    }

    struct CRCCheck: Decodable, Sendable {
        let input: String
        let crc: String
    }

    let beacons: [Beacon]
    let exportCodes: [ExportCode]
    let exportCodeInputs: [ExportCodeInput]
    let keyFiles: [KeyFile]
    let keyFileInputs: [KeyFileInput]
    let advertisements: [Advertisement]
    let replayWindow: [ReplayStep]
    let receptions: [Reception]
    let crc15Check: CRCCheck

    static let shared: VectorFile = decodeVectors("beacon-v1")
}

/// The checked-in vector file `Vectors/<name>.json`, decoded; stops the tests when it is missing or unreadable.
func decodeVectors<T: Decodable>(_ name: String) -> T {
    guard let url = Bundle.module.url(forResource: name, withExtension: "json", subdirectory: "Vectors")
    else { fatalError("Vectors/\(name).json is not in the test bundle") }
    do {
        return try JSONDecoder().decode(T.self, from: Data(contentsOf: url))
    } catch {
        fatalError("cannot read \(name).json: \(error)")
    }
}

/// The vectors' labels for errors: the case name and, where the vectors pin it, one number.
func label(_ error: AccountKeyCodeError) -> String {
    switch error {
    case .invalidCharacter(_, let position): "invalidCharacter \(position)"
    case .wrongLength(let count): "wrongLength \(count)"
    case .checksumMismatch: "checksumMismatch"
    case .unsupportedVersion(let version): "unsupportedVersion \(version)"
    case .nonZeroPadding: "nonZeroPadding"
    case .invalidName(let error): "invalidName \(error)"
    }
}

func label(_ error: AccountKeyFileError) -> String {
    switch error {
    case .notAnAccountKeyFile: "notAnAccountKeyFile"
    case .unsupportedVersion: "unsupportedVersion"
    case .malformedLine(let line): "malformedLine \(line)"
    case .unknownField(_, let line): "unknownField \(line)"
    case .unexpectedField(_, _, let line): "unexpectedField \(line)"
    case .missingField(let field): "missingField \(field)"
    case .trailingContent(let line): "trailingContent \(line)"
    case .invalidDate(_, let line): "invalidDate \(line)"
    case .invalidSecret(let line, _): "invalidSecret \(line)"
    case .invalidChecksum(let line): "invalidChecksum \(line)"
    case .checksumMismatch: "checksumMismatch"
    case .invalidName(.invalidName(_, let problem)): "invalidName \(problem.label)"
    case .invalidName(let other): "invalidName \(other)"
    }
}

func label(_ rejection: BeaconRejection) -> String {
    switch rejection {
    case .tooShort(let length): "tooShort \(length)"
    case .tooLong(let length): "tooLong \(length)"
    case .unsupportedVersion(let version): "unsupportedVersion \(version)"
    case .unknownTag: "unknownTag"
    case .authenticationFailed: "authenticationFailed"
    case .epochTooOld(let beacon, _): "epochTooOld \(beacon.index)"
    case .epochTooNew(let beacon, _): "epochTooNew \(beacon.index)"
    case .replayed(_, let sequence): "replayed \(sequence)"
    }
}

extension AccountNameProblem {
    var label: String {
        switch self {
        case .empty: "empty"
        case .tooLong: "tooLong"
        case .surroundingWhitespace: "surroundingWhitespace"
        case .controlCharacter: "controlCharacter"
        case .pathSeparator: "pathSeparator"
        case .leadingDot: "leadingDot"
        }
    }
}
