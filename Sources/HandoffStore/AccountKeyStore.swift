#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import HandoffCore
import SystemPackage

/// A directory of account key files, one per account, named
/// `<account name>.handoff-key` (format: `AccountKeyFile`, docs/beacon-format.md).
///
/// - Loading refuses files that group or others can access, that another
///   user owns, or that are not regular files, with an error naming the file
///   and the fix (`chmod 600 …`).
/// - Saving is atomic (`AtomicFile`): a temporary file in the same directory,
///   created with mode 0600, is written, flushed with `fsync`, renamed over the
///   target (or linked, when not replacing, so an existing key is never
///   clobbered), and the directory is flushed too. A crash leaves the old file
///   or the new one, never a mix.
/// - Truncated or corrupt files give a clear error, never a crash.
public struct AccountKeyStore: Sendable {
    /// The directory holding the key files.
    public let directory: FilePath
    /// The key file name suffix.
    public static let fileExtension = "handoff-key"

    /// A store over `directory`. Nothing is touched until a method is called;
    /// `save` creates the directory (mode 0700) if needed.
    public init(directory: FilePath) {
        self.directory = directory
    }

    /// The file path for an account name.
    /// - Throws: `.invalidName` if the name is not a valid account name.
    public func path(for name: String) throws(AccountKeyStoreError) -> FilePath {
        do {
            try AccountKey.validate(name: name)
        } catch {
            throw .invalidName(error)
        }
        return directory.appending("\(name).\(Self.fileExtension)")
    }

    /// The account names that have a key file, sorted. A missing directory is empty.
    public func list() throws(AccountKeyStoreError) -> [String] {
        guard let handle = opendir(directory.string) else {
            if errno == ENOENT { return [] }
            throw .system(operation: "list", path: directory.string, errno: Errno(rawValue: errno))
        }
        defer { closedir(handle) }
        let suffix = "." + Self.fileExtension
        var names: [String] = []
        while let entry = readdir(handle) {
            let fileName = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard fileName.hasSuffix(suffix), !fileName.hasPrefix(".") else { continue }
            let name = String(fileName.dropLast(suffix.count))
            if (try? AccountKey.validate(name: name)) != nil { names.append(name) }
        }
        return names.sorted()
    }

    /// Whether a key file exists for `name`.
    public func contains(_ name: String) -> Bool {
        guard let path = try? path(for: name) else { return false }
        return (try? path.stat(followTargetSymlink: false)) != nil
    }

    /// Loads and checks the key file of `name`.
    public func load(_ name: String) throws(AccountKeyStoreError) -> AccountKeyFile {
        let path = try path(for: name)
        let file = try Self.read(path, name: name)
        guard file.key.name == name else { throw .nameMismatch(path: path.string, nameInFile: file.key.name) }
        return file
    }

    /// Writes `file` atomically as the key file of `file.key.name`.
    /// - Parameter replacing: overwrite an existing key of the same name;
    ///   otherwise an existing file gives `.alreadyExists`.
    public func save(_ file: AccountKeyFile, replacing: Bool = false) throws(AccountKeyStoreError) {
        let path = try path(for: file.key.name)
        try createDirectory()
        do {
            try AtomicFile.write(Array(file.encoded().utf8), to: path, mode: 0o600, replacing: replacing)
        } catch {
            if error == .fileExists, !replacing { throw .alreadyExists(name: file.key.name, path: path.string) }
            throw .system(operation: "save", path: path.string, errno: error)
        }
    }

    /// Removes the key file of `name`.
    public func remove(_ name: String) throws(AccountKeyStoreError) {
        let path = try path(for: name)
        guard unlink(path.string) == 0 else {
            if errno == ENOENT { throw .notFound(name: name, path: path.string) }
            throw .system(operation: "remove", path: path.string, errno: Errno(rawValue: errno))
        }
        try syncDirectory()
    }

    /// Reads and parses one key file, with every safety check.
    static func read(_ path: FilePath, name: String) throws(AccountKeyStoreError) -> AccountKeyFile {
        let text = try readProtectedText(path, name: name, maximumSize: AccountKeyFile.maximumSize)
        do {
            return try AccountKeyFile.parse(text)
        } catch {
            throw .corrupt(path: path.string, error)
        }
    }

    /// Reads a file that must be a regular file of ours, mode 0600 or stricter, UTF-8 text
    /// of at most `maximumSize` bytes. `name` is what `.notFound` reports.
    static func readProtectedText(_ path: FilePath, name: String, maximumSize: Int) throws(AccountKeyStoreError) -> String {
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec, .noFollow])
        } catch let error as Errno {
            if error == .noSuchFileOrDirectory { throw .notFound(name: name, path: path.string) }
            if error == .tooManySymbolicLinkLevels { throw .notARegularFile(path: path.string) }
            throw .system(operation: "open", path: path.string, errno: error)
        } catch {
            throw .system(operation: "open", path: path.string, errno: .ioError)
        }
        defer { try? descriptor.close() }

        let info: Stat
        do {
            info = try descriptor.stat()
        } catch {
            throw .system(operation: "stat", path: path.string, errno: error)
        }
        guard info.type == .regular else { throw .notARegularFile(path: path.string) }
        guard info.userID.rawValue == geteuid() else {
            throw .wrongOwner(path: path.string, owner: info.userID.rawValue)
        }
        let mode = UInt16(truncatingIfNeeded: info.permissions.rawValue)
        guard mode & 0o077 == 0 else { throw .insecurePermissions(path: path.string, mode: mode) }
        guard info.size <= maximumSize else { throw .tooLarge(path: path.string, size: info.size) }

        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while bytes.count <= maximumSize {
            let count: Int
            do {
                count = try chunk.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            } catch {
                throw .system(operation: "read", path: path.string, errno: error as? Errno ?? .ioError)
            }
            if count == 0 { break }
            bytes += chunk[..<count]
        }
        guard bytes.count <= maximumSize else {
            throw .tooLarge(path: path.string, size: Int64(bytes.count))
        }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .notText(path: path.string) }
        return text
    }

    /// Creates the directory and any missing parents, the new ones with mode 0700.
    func createDirectory() throws(AccountKeyStoreError) {
        var current = directory.root.map { FilePath(root: $0) } ?? FilePath(".")
        for component in directory.components {
            current.append(component)
            if mkdir(current.string, 0o700) != 0, errno != EEXIST {
                throw .system(operation: "create directory", path: current.string, errno: Errno(rawValue: errno))
            }
        }
    }

    /// Flushes the directory entry changes (the rename, link or unlink) to disk.
    func syncDirectory() throws(AccountKeyStoreError) {
        let descriptor = open(directory.string, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw .system(operation: "open directory", path: directory.string, errno: Errno(rawValue: errno))
        }
        defer { close(descriptor) }
        guard fsync(descriptor) == 0 else {
            throw .system(operation: "sync directory", path: directory.string, errno: Errno(rawValue: errno))
        }
    }
}
