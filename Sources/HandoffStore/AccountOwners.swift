#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import SystemPackage

/// Which local user may use each account: a small text file `owners` in the
/// accounts directory, one `name uid` pair per line, written atomically with
/// mode 0600. It holds no secret, but only the daemon needs it.
public struct AccountOwners: Sendable, Equatable {
    public static let fileName = "owners"
    public private(set) var owners: [String: UInt32]

    public init(owners: [String: UInt32] = [:]) {
        self.owners = owners
    }

    public subscript(name: String) -> UInt32? {
        get { owners[name] }
        set { owners[name] = newValue }
    }

    /// The file's text: sorted lines, so rewrites are stable.
    public func encoded() -> String {
        owners.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)\n" }.joined()
    }

    /// Parses the file's text; malformed lines are an error naming the line.
    public static func parse(_ text: String) throws(AccountOwnersError) -> AccountOwners {
        var owners: [String: UInt32] = [:]
        for (number, line) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let trimmed = line.trimmingPrefix(while: { $0 == " " })
            if trimmed.isEmpty || trimmed.hasPrefix("#") { continue }
            let fields = trimmed.split(separator: " ")
            guard fields.count == 2, let uid = UInt32(fields[1]) else {
                throw .corrupt(path: nil, line: number + 1)
            }
            owners[String(fields[0])] = uid
        }
        return AccountOwners(owners: owners)
    }

    /// Reads `owners` from `directory`; a missing file is an empty table.
    public static func load(from directory: FilePath) throws(AccountOwnersError) -> AccountOwners {
        let path = directory.appending(fileName)
        let descriptor: FileDescriptor
        do {
            descriptor = try FileDescriptor.open(path, .readOnly, options: [.closeOnExec, .noFollow])
        } catch let error as Errno {
            if error == .noSuchFileOrDirectory { return AccountOwners() }
            throw .system(operation: "open", path: path.string, errno: error)
        } catch {
            throw .system(operation: "open", path: path.string, errno: .ioError)
        }
        defer { try? descriptor.close() }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count: Int
            do {
                count = try buffer.withUnsafeMutableBytes { try descriptor.read(into: $0) }
            } catch {
                throw .system(operation: "read", path: path.string, errno: error as? Errno ?? .ioError)
            }
            if count == 0 { break }
            bytes += buffer[0..<count]
            if bytes.count > 1 << 20 { throw .corrupt(path: path.string, line: 0) }
        }
        do { return try parse(String(decoding: bytes, as: UTF8.self)) } catch {
            if case .corrupt(_, let line) = error { throw .corrupt(path: path.string, line: line) }
            throw error
        }
    }

    /// Writes the table to `directory` atomically (mode 0600).
    public func save(to directory: FilePath) throws(AccountOwnersError) {
        let path = directory.appending(Self.fileName)
        do { try AtomicFile.write(Array(encoded().utf8), to: path) } catch {
            throw .system(operation: "write", path: path.string, errno: error)
        }
    }
}

/// Why the owners table could not be read or written.
public enum AccountOwnersError: Error, Sendable, Equatable, CustomStringConvertible {
    case corrupt(path: String?, line: Int)
    case system(operation: String, path: String, errno: Errno)

    public var description: String {
        switch self {
        case .corrupt(let path, let line):
            "\(path ?? AccountOwners.fileName): line \(line) is not \"<account name> <uid>\"; fix or remove that line"
        case .system(let operation, let path, let errno):
            "cannot \(operation) \(path): \(errno)"
        }
    }
}
