#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HandoffKit

/// Writes hand-over files (`HandedOverActivity`) where only this user can read them:
/// `$XDG_RUNTIME_DIR/handoff/continued/`, or `/tmp/handoff-agent-UID/continued/` when
/// there is no runtime directory (the XDG spec's fallback, with a warning in the log).
public struct HandOverFiles: Sendable {
    public let directory: String

    public init(runtimeDir: String?) {
        if let runtimeDir {
            directory = runtimeDir + "/handoff/continued"
        } else {
            directory = "/tmp/handoff-agent-\(getuid())/continued"
        }
    }

    /// Files older than this are removed: the app never claimed them.
    public static let lifetime: TimeInterval = 600

    /// Writes `handed` to a new file, mode 0600, and returns its path.
    /// - Throws: `POSIXError` or a description when the directory is not private.
    public func write(_ handed: HandedOverActivity) throws -> String {
        try makePrivateDirectory(directory)
        removeStale()
        let data = try JSONEncoder().encode(handed)
        let safe = handed.continuation.filter { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "-") }
        let path = "\(directory)/\(safe)-\(UUID().uuidString.prefix(8).lowercased())\(HandedOverActivity.fileSuffix)"
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        defer { close(fd) }
        try data.withUnsafeBytes { bytes in
            var offset = 0
            while offset < bytes.count {
                let n = Glibc.write(fd, bytes.baseAddress! + offset, bytes.count - offset)
                if n < 0 && errno == EINTR { continue }
                guard n > 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
                offset += n
            }
        }
        return path
    }

    /// Removes hand-overs older than `lifetime`.
    public func removeStale(now: Date = Date()) {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasSuffix(HandedOverActivity.fileSuffix) {
            let path = directory + "/" + name
            if let date = (try? FileManager.default.attributesOfItem(atPath: path))?[.modificationDate] as? Date,
                now.timeIntervalSince(date) > Self.lifetime
            {
                unlink(path)
            }
        }
    }

    /// Creates `path` and its parents below an existing directory with mode 0700, and
    /// checks the last one is ours and private.
    func makePrivateDirectory(_ path: String) throws {
        var current = ""
        for component in path.split(separator: "/") {
            current += "/" + component
            if mkdir(current, 0o700) != 0 && errno != EEXIST {
                throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
            }
        }
        var info = stat()
        guard lstat(path, &info) == 0, (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFDIR), info.st_uid == getuid() else {
            throw HandOverError("\(path) is not a directory of this user")
        }
        if info.st_mode & 0o077 != 0 { chmod(path, 0o700) }
    }
}

/// A failure to hand an activity over, in words.
public struct HandOverError: Error, Sendable, CustomStringConvertible {
    public var description: String
    public init(_ description: String) { self.description = description }
}
