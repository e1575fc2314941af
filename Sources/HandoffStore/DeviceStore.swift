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

/// This device's identity and each account's roster of other devices
/// (docs/devices.md), kept in the account key directory next to the keys:
///
/// - `device.handoff-identity`: the identity file (`DeviceIdentity.fileContents`),
///   created on first use, mode 0600, with the same safety checks as a key file;
/// - `<account name>.handoff-devices`: the account's roster as JSON, mode 0600.
///
/// Every write is atomic (`AtomicFile`).
public struct DeviceStore: Sendable {
    public static let identityFileName = "device.handoff-identity"
    public static let rosterExtension = "handoff-devices"
    /// No valid identity file or roster is larger.
    static let maximumIdentitySize = 4096
    static let maximumRosterSize = 256 * 1024

    public let keys: AccountKeyStore
    public var directory: FilePath { keys.directory }

    public init(directory: FilePath) {
        keys = AccountKeyStore(directory: directory)
    }

    /// A store over the directory at `path`.
    public init(path: String) {
        self.init(directory: FilePath(path))
    }

    /// The identity kept here under `name`, made (and saved) first when there is none.
    /// - Returns: the identity and whether it was made now.
    public func identity(name: String) throws(DeviceStoreError) -> (identity: DeviceIdentity, created: Bool) {
        let path = directory.appending(Self.identityFileName)
        var text: String?
        do {
            text = try AccountKeyStore.readProtectedText(path, name: "device", maximumSize: Self.maximumIdentitySize)
        } catch .notFound {
            // Made below.
        } catch {
            throw .file(error)
        }
        if let text {
            do {
                return (try DeviceIdentity(fileContents: text, name: name), false)
            } catch .invalidName(let why) {
                throw .invalidName(.invalidName(why))
            } catch {
                throw .corrupt(path: path.string, "\(error)")
            }
        }
        let identity: DeviceIdentity
        do { identity = try DeviceIdentity.generate(name: name) } catch { throw .invalidName(error) }
        do {
            try keys.createDirectory()
            try AtomicFile.write(Array(identity.fileContents().utf8), to: path, mode: 0o600, replacing: false)
        } catch let error as Errno where error == .fileExists {
            // Made meanwhile by another process: use that one.
            return try self.identity(name: name)
        } catch let error as Errno {
            throw .file(.system(operation: "save", path: path.string, errno: error))
        } catch let error as AccountKeyStoreError {
            throw .file(error)
        } catch {
            throw .file(.system(operation: "save", path: path.string, errno: .ioError))
        }
        return (identity, true)
    }

    /// The roster of the account `name`; empty when there is none yet.
    public func roster(account name: String) throws(DeviceStoreError) -> DeviceRoster {
        let path = try rosterPath(name)
        let text: String
        do {
            text = try AccountKeyStore.readProtectedText(path, name: name, maximumSize: Self.maximumRosterSize)
        } catch .notFound {
            return DeviceRoster()
        } catch {
            throw .file(error)
        }
        do {
            return try JSONDecoder().decode(DeviceRoster.self, from: Data(text.utf8))
        } catch {
            throw .corrupt(path: path.string, "not a device roster (\(error))")
        }
    }

    /// Saves the roster of the account `name`.
    public func save(_ roster: DeviceRoster, account name: String) throws(DeviceStoreError) {
        try writeJSON(roster, to: try rosterPath(name), detail: true)
    }

    /// Removes the roster of the account `name`, if there is one.
    public func removeRoster(account name: String) throws(DeviceStoreError) {
        try removeFile(try rosterPath(name))
    }

    private func rosterPath(_ name: String) throws(DeviceStoreError) -> FilePath {
        try accountFile(name, extension: Self.rosterExtension)
    }

    // MARK: Files of an account

    /// `<name>.<ext>` in the directory, for a valid account name.
    func accountFile(_ name: String, extension ext: String) throws(DeviceStoreError) -> FilePath {
        do {
            try AccountKey.validate(name: name)
        } catch {
            throw .file(.invalidName(error))
        }
        return directory.appending("\(name).\(ext)")
    }

    /// Writes `value` as JSON to `path`, atomically, mode 0600. `detail`: whether an
    /// encoding error's own text may be shown (not for a file that holds secrets).
    func writeJSON(_ value: some Encodable, to path: FilePath, detail: Bool) throws(DeviceStoreError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .prettyPrinted]
        do {
            try keys.createDirectory()
            let data = try encoder.encode(value)
            try AtomicFile.write(Array(data) + [0x0A], to: path, mode: 0o600, replacing: true)
        } catch let error as Errno {
            throw .file(.system(operation: "save", path: path.string, errno: error))
        } catch let error as AccountKeyStoreError {
            throw .file(error)
        } catch {
            throw .corrupt(path: path.string, detail ? "cannot be encoded (\(error))" : "cannot be encoded")
        }
    }

    /// Removes the file at `path`, if there is one.
    func removeFile(_ path: FilePath) throws(DeviceStoreError) {
        guard unlink(path.string) == 0 || errno == ENOENT else {
            throw .file(.system(operation: "remove", path: path.string, errno: Errno(rawValue: errno)))
        }
    }
}

/// Why the device identity or a roster could not be read or written.
public enum DeviceStoreError: Error, Sendable, CustomStringConvertible {
    /// Reading or writing the file failed, or it is not safe to read (mode, owner, type).
    case file(AccountKeyStoreError)
    /// The file's contents are invalid.
    case corrupt(path: String, String)
    /// The configured device name is not valid.
    case invalidName(DeviceCardError)

    public var description: String {
        switch self {
        case .file(let error): "\(error)"
        case .corrupt(let path, let why): "\(path) is invalid: \(why)"
        case .invalidName(let error): "\(error)"
        }
    }
}
