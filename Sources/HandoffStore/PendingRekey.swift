#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import SystemPackage

/// On the device that removed another from an account (docs/devices.md, section 7.6): the
/// account's retired key, kept only to recognise the beacons of devices that have not received
/// the new key yet, and one envelope per such device, until `expires` (14 days after the removal).
/// Kept as `<account name>.handoff-rekey`, JSON, mode 0600, written atomically; removed once no
/// envelope is pending.
public struct PendingRekey: Sendable, Equatable {
    /// How long the envelopes are kept.
    public static let lifetime: Double = 14 * 24 * 3600

    /// One envelope waiting for its recipient.
    public struct Delivery: Sendable, Equatable, Codable {
        /// The recipient's fingerprint.
        public var device: String
        /// The envelope, `RekeyFormat.envelopeLength` bytes.
        public var envelope: [UInt8]

        public init(device: String, envelope: [UInt8]) {
            self.device = device
            self.envelope = envelope
        }
    }

    /// The account key the envelopes are bound to (the key before the removal).
    public var retired: AccountKey
    /// The new key's account identifier.
    public var newAccount: AccountID
    /// The removed devices' fingerprints.
    public var removed: [String]
    /// When the removal was made and when the envelopes are given up (seconds since 1970).
    public var started: Double
    public var expires: Double
    public var deliveries: [Delivery]

    public init(retired: AccountKey, newAccount: AccountID, removed: [String], started: Double, deliveries: [Delivery]) {
        self.retired = retired
        self.newAccount = newAccount
        self.removed = removed
        self.started = started
        expires = started + Self.lifetime
        self.deliveries = deliveries
    }

    /// The file's JSON: the retired key as an account key file's text (docs/beacon-format.md), the
    /// envelopes in hex.
    struct File: Codable {
        var version: Int
        var retiredKey: String
        var newAccount: String
        var removed: [String]
        var started: Double
        var expires: Double
        var pending: [Entry]

        struct Entry: Codable {
            var device: String
            var envelope: String
        }
    }

    func file() -> File {
        File(
            version: 1, retiredKey: AccountKeyFile(key: retired, created: UInt64(max(0, started))).encoded(),
            newAccount: newAccount.description, removed: removed, started: started, expires: expires,
            pending: deliveries.map { File.Entry(device: $0.device, envelope: Self.hex($0.envelope)) })
    }

    init(_ file: File) throws(DeviceStoreError) {
        let why: String
        parse: do {
            guard file.version == 1 else { why = "version \(file.version)"; break parse }
            guard let key = try? AccountKeyFile.parse(file.retiredKey).key else { why = "no valid retired key"; break parse }
            guard let id = AccountID(file.newAccount) else { why = "no new account identifier"; break parse }
            var deliveries: [Delivery] = []
            for entry in file.pending {
                guard let bytes = Self.bytes(hex: entry.envelope) else { why = "an envelope that is not hex"; break parse }
                deliveries.append(Delivery(device: entry.device, envelope: bytes))
            }
            retired = key
            newAccount = id
            removed = file.removed
            started = file.started
            expires = file.expires
            self.deliveries = deliveries
            return
        }
        throw .corrupt(path: "", why)
    }
}

extension PendingRekey {
    static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        for byte in bytes { out += [digits[Int(byte >> 4)], digits[Int(byte & 15)]] }
        return String(decoding: out, as: UTF8.self)
    }

    static func bytes(hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        func value(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: c - 0x30
            case 0x61...0x66: c - 0x61 + 10
            default: nil
            }
        }
        var out: [UInt8] = []
        var index = 0
        while index < digits.count {
            guard let high = value(digits[index]), let low = value(digits[index + 1]) else { return nil }
            out.append(high << 4 | low)
            index += 2
        }
        return out
    }
}

extension DeviceStore {
    public static let rekeyExtension = "handoff-rekey"
    static let maximumRekeySize = 64 * 1024

    /// The pending rekey of the account `name`, if there is one.
    public func pendingRekey(account name: String) throws(DeviceStoreError) -> PendingRekey? {
        let path = try rekeyPath(name)
        let text: String
        do {
            text = try AccountKeyStore.readProtectedText(path, name: name, maximumSize: Self.maximumRekeySize)
        } catch .notFound {
            return nil
        } catch {
            throw .file(error)
        }
        let file: PendingRekey.File
        do {
            file = try JSONDecoder().decode(PendingRekey.File.self, from: Data(text.utf8))
        } catch {
            throw .corrupt(path: path.string, "not a pending rekey")
        }
        do {
            return try PendingRekey(file)
        } catch .corrupt(_, let why) {
            throw .corrupt(path: path.string, why)
        } catch {
            throw error
        }
    }

    /// Saves the pending rekey of the account `name` (mode 0600, atomically).
    public func save(_ rekey: PendingRekey, account name: String) throws(DeviceStoreError) {
        // The file holds keys: no encoder error text in the message.
        try writeJSON(rekey.file(), to: try rekeyPath(name), detail: false)
    }

    /// Removes the pending rekey of the account `name`, if there is one.
    public func removePendingRekey(account name: String) throws(DeviceStoreError) {
        try removeFile(try rekeyPath(name))
    }

    private func rekeyPath(_ name: String) throws(DeviceStoreError) -> FilePath {
        try accountFile(name, extension: Self.rekeyExtension)
    }
}
