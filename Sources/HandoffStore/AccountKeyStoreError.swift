import HandoffCore
import SystemPackage

/// Why the account key store could not list, load, save or remove a key.
/// Every case names the file involved and, where there is one, the fix.
public enum AccountKeyStoreError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The account name cannot be a key file name.
    case invalidName(AccountKeyError)
    /// No key file for this name.
    case notFound(name: String, path: String)
    /// A key file for this name exists and replacing was not asked for.
    case alreadyExists(name: String, path: String)
    /// Group or others have some access to the file (the mode is given).
    case insecurePermissions(path: String, mode: UInt16)
    /// The file belongs to another user.
    case wrongOwner(path: String, owner: UInt32)
    /// The path is a symbolic link, directory or other non-regular file.
    case notARegularFile(path: String)
    /// The file is larger than any valid key file.
    case tooLarge(path: String, size: Int64)
    /// The file is not valid UTF-8 text.
    case notText(path: String)
    /// The file's contents are invalid: truncated, corrupt or from a newer version.
    case corrupt(path: String, AccountKeyFileError)
    /// The name inside the file differs from the file's name.
    case nameMismatch(path: String, nameInFile: String)
    /// A system call failed.
    case system(operation: String, path: String, errno: Errno)

    /// What failed, on which file, and the fix where there is one.
    public var description: String {
        switch self {
        case .invalidName(let error):
            "\(error)"
        case .notFound(let name, let path):
            "no account key named \(String(reflecting: name)) (looked for \(path))"
        case .alreadyExists(let name, let path):
            "an account key named \(String(reflecting: name)) already exists at \(path)"
        case .insecurePermissions(let path, let mode):
            "refusing to load \(path): it is accessible by group or others (mode \(Self.octal(mode))); "
                + "run `chmod 600 \(Self.shellQuoted(path))` and check that nobody copied the key"
        case .wrongOwner(let path, let owner):
            "refusing to load \(path): it belongs to user \(owner), not to the user running handoff; "
                + "fix it with `chown` or remove the file"
        case .notARegularFile(let path):
            "refusing to load \(path): not a regular file (a symbolic link or directory?)"
        case .tooLarge(let path, let size):
            "refusing to load \(path): \(size) bytes is far larger than an account key file; it is not one"
        case .notText(let path):
            "\(path) is corrupt: it is not UTF-8 text"
        case .corrupt(let path, let error):
            "\(path) is not a valid account key file: \(error)"
        case .nameMismatch(let path, let nameInFile):
            "\(path) holds the account \(String(reflecting: nameInFile)): rename the file to match, or remove it"
        case .system(let operation, let path, let errno):
            "could not \(operation) \(path): \(errno)"
        }
    }

    static func octal(_ mode: UInt16) -> String {
        let digits = String(mode & 0o7777, radix: 8)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }

    static func shellQuoted(_ path: String) -> String {
        "'" + path.replacingAll("'", with: "'\\''") + "'"
    }
}

extension String {
    fileprivate func replacingAll(_ target: Character, with replacement: String) -> String {
        var out = ""
        for character in self { if character == target { out += replacement } else { out.append(character) } }
        return out
    }
}
