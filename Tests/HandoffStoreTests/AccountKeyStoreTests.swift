#if canImport(Glibc)
import Glibc
#endif
import HandoffCore
import SystemPackage
import Testing
@testable import HandoffStore

/// Real files in a fresh temporary directory per test.
final class TemporaryDirectory {
    let path: FilePath

    init() {
        var template = Array("/tmp/handoff-store-test-XXXXXX".utf8CString)
        guard let created = mkdtemp(&template) else { fatalError("mkdtemp failed: \(errno)") }
        path = FilePath(String(cString: created))
    }

    deinit {
        Self.removeTree(path.string)
    }

    /// Removes a directory tree without following symbolic links.
    private static func removeTree(_ path: String) {
        var info = stat()
        guard lstat(path, &info) == 0 else { return }
        if info.st_mode & S_IFMT == S_IFDIR, let handle = opendir(path) {
            while let entry = readdir(handle) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                if name != ".", name != ".." { removeTree(path + "/" + name) }
            }
            closedir(handle)
            rmdir(path)
        } else {
            unlink(path)
        }
    }

    func mode(of name: String) -> UInt16 {
        var info = stat()
        guard stat(path.appending(name).string, &info) == 0 else { return 0xFFFF }
        return UInt16(info.st_mode & 0o7777)
    }

    func entries() -> [String] {
        guard let handle = opendir(path.string) else { return [] }
        defer { closedir(handle) }
        var names: [String] = []
        while let entry = readdir(handle) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            if name != ".", name != ".." { names.append(name) }
        }
        return names.sorted()
    }

    func write(_ name: String, _ text: String, mode: mode_t = 0o600) {
        let file = path.appending(name).string
        let descriptor = open(file, O_WRONLY | O_CREAT | O_TRUNC, mode)
        precondition(descriptor >= 0)
        _ = text.utf8CString.withUnsafeBufferPointer { Glibc.write(descriptor, $0.baseAddress, $0.count - 1) }
        close(descriptor)
        chmod(file, mode)
    }
}

@Suite(.serialized) struct AccountKeyStoreTests {
    static let key = try! AccountKey(name: "Home", secret: Array(0..<32))
    static let file = AccountKeyFile(key: key, created: 1_750_000_000)

    /// The store error `body` throws, or nil (any other error is recorded as an issue).
    func error(_ body: () throws -> Void) -> AccountKeyStoreError? {
        do {
            try body()
            return nil
        } catch let error as AccountKeyStoreError {
            return error
        } catch {
            Issue.record("unexpected error type: \(error)")
            return nil
        }
    }

    @Test("Save, list, load, remove")
    func lifecycle() throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        #expect(try store.list() == [])
        try store.save(Self.file)
        let other = AccountKeyFile(key: try AccountKey.generate(name: "Work laptop"), created: 5)
        try store.save(other)
        #expect(try store.list() == ["Home", "Work laptop"])
        #expect(store.contains("Home"))
        #expect(try store.load("Home") == Self.file)
        #expect(try store.load("Work laptop") == other)
        try store.remove("Home")
        #expect(try store.list() == ["Work laptop"])
        #expect(!store.contains("Home"))
        #expect(error { try store.remove("Home") } == .notFound(name: "Home", path: directory.path.appending("Home.handoff-key").string))
        #expect(error { _ = try store.load("Home") } == .notFound(name: "Home", path: directory.path.appending("Home.handoff-key").string))
    }

    // The umask is process-wide and other suites create files concurrently, so
    // this test leaves it alone; `save` sets the mode with fchmod regardless.
    @Test("An atomic save leaves exactly one file, with mode 0600")
    func atomicWriteMode() throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        try store.save(Self.file)
        #expect(directory.mode(of: "Home.handoff-key") == 0o600)
        #expect(directory.entries() == ["Home.handoff-key"])  // no temporary file left behind
        try store.save(Self.file, replacing: true)
        #expect(directory.mode(of: "Home.handoff-key") == 0o600)
        #expect(directory.entries() == ["Home.handoff-key"])
    }

    @Test("A save that fails names the file and the cause, and leaves no temporary file")
    func failedSave() throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        // A directory where the key file should go: renaming a file over it fails.
        let target = directory.path.appending("Home.handoff-key")
        #expect(mkdir(target.string, 0o700) == 0)
        #expect(error { try store.save(Self.file, replacing: true) } == .system(operation: "save", path: target.string, errno: .isDirectory))
        #expect(error { try store.save(Self.file) } == .alreadyExists(name: "Home", path: target.string))
        #expect(directory.entries() == ["Home.handoff-key"])
    }

    @Test("Saving creates missing directories with mode 0700")
    func createsDirectory() throws {
        let directory = TemporaryDirectory()
        let nested = directory.path.appending("config/handoff/accounts")
        let store = AccountKeyStore(directory: nested)
        #expect(try store.list() == [])
        try store.save(Self.file)
        #expect(directory.mode(of: "config") == 0o700)
        #expect(directory.mode(of: "config/handoff/accounts") == 0o700)
        #expect(try store.load("Home") == Self.file)
    }

    @Test("Saving never clobbers an existing key unless asked to")
    func noClobber() throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        try store.save(Self.file)
        let replacement = AccountKeyFile(key: try AccountKey.generate(name: "Home"), created: 7)
        #expect(error { try store.save(replacement) } == .alreadyExists(name: "Home", path: directory.path.appending("Home.handoff-key").string))
        #expect(try store.load("Home") == Self.file)
        #expect(directory.entries() == ["Home.handoff-key"])
        try store.save(replacement, replacing: true)
        #expect(try store.load("Home") == replacement)
    }

    @Test("A file readable by group or others is refused, naming the file and `chmod 600`", arguments: [0o644, 0o640, 0o604, 0o620, 0o660])
    func insecurePermissions(mode: Int) throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        try store.save(Self.file)
        let path = directory.path.appending("Home.handoff-key").string
        chmod(path, mode_t(mode))
        let failure = error { _ = try store.load("Home") }
        #expect(failure == .insecurePermissions(path: path, mode: UInt16(mode)))
        let message = failure?.description ?? ""
        #expect(message.contains(path))
        #expect(message.contains("chmod 600 '\(path)'"))
        #expect(message.contains("0\(String(mode, radix: 8))"))
        chmod(path, 0o600)
        #expect(try store.load("Home") == Self.file)
    }

    @Test("A corrupt file gives a clear error naming the file")
    func corrupt() throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        let path = directory.path.appending("Home.handoff-key").string
        let text = Self.file.encoded()
        directory.write("Home.handoff-key", text.replacingOccurrences(of: "secret: 00", with: "secret: 01"))
        let failure = error { _ = try store.load("Home") }
        guard case .corrupt(let reportedPath, .checksumMismatch) = failure else {
            Issue.record("expected a checksum mismatch, got \(String(describing: failure))")
            return
        }
        #expect(reportedPath == path)
        #expect(failure!.description.hasPrefix("\(path) is not a valid account key file: checksum mismatch"))
    }

    @Test("A truncated file gives a clear error, never a crash")
    func truncated() throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        let text = Self.file.encoded()
        for length in [0, 10, 100, 150, text.utf8.count - 10] {
            directory.write("Home.handoff-key", String(text.prefix(length)))
            let failure = error { _ = try store.load("Home") }
            guard case .corrupt = failure else {
                Issue.record("length \(length): expected corrupt, got \(String(describing: failure))")
                continue
            }
        }
        directory.write("Home.handoff-key", String(text.prefix(170)))
        #expect(error { _ = try store.load("Home") }?.description.contains("truncated") == true)
    }

    @Test("Binary garbage, oversized files, symlinks and directories are refused")
    func notKeyFiles() throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        let path = directory.path.appending("Home.handoff-key").string
        directory.write("Home.handoff-key", "handoff-account-key: 1\n\u{FF}")
        // Write invalid UTF-8 directly.
        let descriptor = open(path, O_WRONLY | O_TRUNC)
        var garbage: [UInt8] = [0xFF, 0xFE, 0x00, 0x80]
        _ = write(descriptor, &garbage, garbage.count)
        close(descriptor)
        #expect(error { _ = try store.load("Home") } == .notText(path: path))

        directory.write("Home.handoff-key", String(repeating: "#", count: 5000))
        #expect(error { _ = try store.load("Home") } == .tooLarge(path: path, size: 5000))

        unlink(path)
        try store.save(AccountKeyFile(key: try AccountKey.generate(name: "Real"), created: 0))
        symlink(directory.path.appending("Real.handoff-key").string, path)
        #expect(error { _ = try store.load("Home") } == .notARegularFile(path: path))

        unlink(path)
        mkdir(path, 0o700)
        #expect(error { _ = try store.load("Home") } == .notARegularFile(path: path))
    }

    @Test("A file holding another account's name is refused")
    func nameMismatch() throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        directory.write("Home.handoff-key", AccountKeyFile(key: try AccountKey.generate(name: "Work"), created: 0).encoded())
        #expect(error { _ = try store.load("Home") } == .nameMismatch(path: directory.path.appending("Home.handoff-key").string, nameInFile: "Work"))
    }

    @Test("Names that are not single safe path components are refused", arguments: ["", "../etc", "a/b", ".hidden", "x\ny"])
    func invalidNames(name: String) throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        guard case .invalidName = error({ _ = try store.load(name) }) else {
            Issue.record("load(\(String(reflecting: name))) was not refused as an invalid name")
            return
        }
        guard case .invalidName = error({ try store.remove(name) }) else {
            Issue.record("remove(\(String(reflecting: name))) was not refused as an invalid name")
            return
        }
        #expect(!store.contains(name))
    }

    @Test("Listing skips temporary files, other files and invalid names")
    func listingFilters() throws {
        let directory = TemporaryDirectory()
        let store = AccountKeyStore(directory: directory.path)
        try store.save(Self.file)
        directory.write(".Home.123.tmp", "x")
        directory.write("notes.txt", "x")
        directory.write(" spaced.handoff-key", "x")
        #expect(try store.list() == ["Home"])
    }
}

extension String {
    func replacingOccurrences(of target: String, with replacement: String) -> String {
        components(separatedBy: target).joined(separator: replacement)
    }

    func components(separatedBy separator: String) -> [String] {
        var parts: [String] = []
        var rest = Substring(self)
        while let range = rest.range(of: separator) {
            parts.append(String(rest[..<range.lowerBound]))
            rest = rest[range.upperBound...]
        }
        parts.append(String(rest))
        return parts
    }
}
