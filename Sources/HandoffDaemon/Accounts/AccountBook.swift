#if canImport(Glibc)
import Glibc
#endif
import HandoffCore
import HandoffProtocol
import HandoffStore
import SystemPackage

/// The account keys this daemon holds, and which local user may use each.
///
/// Keys live in the accounts directory as `NAME.handoff-key` files (mode
/// 0600, written atomically by `AccountKeyStore`); owners in its `owners`
/// file. root may use every account; any other uid only the accounts it owns.
/// Errors returned to clients never contain key material.
public struct AccountBook: Sendable {
    public let directory: FilePath
    private let store: AccountKeyStore
    public private(set) var keys: [String: AccountKey] = [:]
    private var owners = AccountOwners()

    /// Loads every readable account. Files that fail to load are skipped and
    /// described in the returned problems (for the log); they stay on disk.
    public static func load(directory: String) -> (book: AccountBook, problems: [String]) {
        var book = AccountBook(directory: FilePath(directory))
        var problems: [String] = []
        do { book.owners = try AccountOwners.load(from: book.directory) } catch {
            problems.append(error.description)
        }
        let names: [String]
        do { names = try book.store.list() } catch {
            return (book, problems + [error.description])
        }
        for name in names {
            do { book.keys[name] = try book.store.load(name).key } catch {
                problems.append(error.description)
            }
        }
        return (book, problems)
    }

    private init(directory: FilePath) {
        self.directory = directory
        self.store = AccountKeyStore(directory: directory)
    }

    /// The uid that owns `name`; accounts without an entry belong to root.
    public func owner(of name: String) -> UInt32 { owners[name] ?? 0 }

    public func mayUse(_ name: String, uid: UInt32) -> Bool {
        uid == 0 || owner(of: name) == uid
    }

    /// The accounts `uid` may use, sorted by name.
    public func visible(to uid: UInt32) -> [AccountKey] {
        keys.values.filter { mayUse($0.name, uid: uid) }.sorted { $0.name < $1.name }
    }

    /// The account a beacon of `uid`'s activity goes out under: the first by name
    /// of those `uid` owns; for root, which may use every account, another
    /// user's only when root owns none (docs/protocol.md, Access control).
    public func advertisingAccount(for uid: UInt32) -> AccountKey? {
        let usable = visible(to: uid)
        return usable.first { owner(of: $0.name) == uid } ?? usable.first
    }

    public func info(for uid: UInt32) -> [AccountInfo] {
        visible(to: uid).map { AccountInfo(name: $0.name, fingerprint: $0.id.description, owner: owner(of: $0.name)) }
    }

    /// Creates a new random account owned by `owner`.
    public mutating func create(name: String, owner: UInt32) throws(ProtocolError) -> AccountKey {
        let key: AccountKey
        do { key = try AccountKey.generate(name: name) } catch {
            throw ProtocolError(.invalidParams, "name: \(error)")
        }
        try add(key, owner: owner)
        return key
    }

    /// Adds the account carried by an export code, owned by `owner`.
    public mutating func importCode(_ code: String, name: String, owner: UInt32) throws(ProtocolError) -> AccountKey {
        do { try AccountKey.validate(name: name) } catch {
            throw ProtocolError(.invalidParams, "name: \(error)")
        }
        let key: AccountKey
        do { key = try AccountKeyCode.decode(code, name: name) } catch {
            throw ProtocolError(.invalidParams, "code: \(error)")
        }
        if let existing = keys.values.first(where: { $0.id == key.id }) {
            throw ProtocolError(.conflict, "this key is already here as account \"\(existing.name)\"")
        }
        try add(key, owner: owner)
        return key
    }

    /// Adds an account received by pairing (docs/pairing.md), owned by `owner`.
    public mutating func addPaired(_ key: AccountKey, owner: UInt32) throws(ProtocolError) {
        if let existing = keys.values.first(where: { $0.id == key.id }) {
            throw ProtocolError(.conflict, "this key is already here as account \"\(existing.name)\"")
        }
        try add(key, owner: owner)
    }

    /// Replaces the key of the account `key.name` by `key` (a rekey, docs/devices.md section 7),
    /// on disk atomically first: when the file cannot be written nothing changes.
    public mutating func replace(with key: AccountKey) throws(ProtocolError) {
        guard keys[key.name] != nil else { throw ProtocolError(.notFound, "no account \"\(key.name)\"") }
        var created = timespec()
        clock_gettime(CLOCK_REALTIME, &created)
        do {
            try store.save(AccountKeyFile(key: key, created: UInt64(created.tv_sec)), replacing: true)
        } catch {
            throw ProtocolError(.internal, error.description)
        }
        keys[key.name] = key
    }

    /// The export code of an account `uid` may use.
    public func exportCode(_ name: String, uid: UInt32) throws(ProtocolError) -> String {
        let key = try usable(name, uid: uid)
        return AccountKeyCode.encode(key)
    }

    /// Deletes an account `uid` may use, from memory and disk.
    public mutating func remove(_ name: String, uid: UInt32) throws(ProtocolError) {
        _ = try usable(name, uid: uid)
        do { try store.remove(name) } catch {
            throw ProtocolError(.internal, error.description)
        }
        keys[name] = nil
        owners[name] = nil
        try? owners.save(to: directory)
    }

    private func usable(_ name: String, uid: UInt32) throws(ProtocolError) -> AccountKey {
        guard let key = keys[name], mayUse(name, uid: uid) else {
            throw ProtocolError(.notFound, "no account \"\(name)\" that you may use")
        }
        return key
    }

    private mutating func add(_ key: AccountKey, owner: UInt32) throws(ProtocolError) {
        guard keys[key.name] == nil else {
            throw ProtocolError(.conflict, "an account named \"\(key.name)\" already exists")
        }
        var created = timespec()
        clock_gettime(CLOCK_REALTIME, &created)
        do {
            try store.save(AccountKeyFile(key: key, created: UInt64(created.tv_sec)))
        } catch {
            throw ProtocolError(.internal, error.description)
        }
        var newOwners = owners
        newOwners[key.name] = owner
        do { try newOwners.save(to: directory) } catch {
            try? store.remove(key.name)
            throw ProtocolError(.internal, error.description)
        }
        owners = newOwners
        keys[key.name] = key
    }
}
