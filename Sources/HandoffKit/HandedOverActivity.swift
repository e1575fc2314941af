#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HandoffProtocol

/// An activity that `handoff-agent` continued for this app and handed over at launch
/// (docs/desktop.md, "The hand-over").
///
/// The agent writes the restored activity to a private file (mode 0600, in a 0700
/// directory under `$XDG_RUNTIME_DIR`) and launches the app with the file as its
/// `%f` argument, or as a `file://` URI for `%u` (or in D-Bus activation's `Open`),
/// and with the path in `HANDOFF_CONTINUATION_FILE`:
///
/// ```swift
/// if let handed = try HandedOverActivity.claim() {   // from CommandLine.arguments or the environment
///     open(handed.activity.webpage)
/// }
/// ```
public struct HandedOverActivity: Sendable, Codable, Hashable {
    /// The file format's version; this is 1.
    public var version: Int
    /// The continuation that restored it, as in the `continued` event.
    public var continuation: String
    /// The nearby activity it was continued from.
    public var nearbyID: String
    /// The activity, whole and authenticated by handoffd.
    public var activity: ContinuedActivity

    public init(continuation: String, nearbyID: String, activity: ContinuedActivity) {
        self.version = 1
        self.continuation = continuation
        self.nearbyID = nearbyID
        self.activity = activity
    }

    /// The environment variable that names the file.
    public static let environmentVariable = "HANDOFF_CONTINUATION_FILE"
    /// The ending of a hand-over file's name: how `claim` recognises it among the arguments.
    public static let fileSuffix = ".handoff-activity.json"

    /// Why a hand-over cannot be read.
    public struct ReadError: Error, Sendable, Hashable, CustomStringConvertible {
        public var description: String
    }

    /// The hand-over named among `arguments` (a path or `file://` URI ending in
    /// `fileSuffix`) or in the environment, read and then deleted, so that it is
    /// claimed once; nil when the app was not launched to continue an activity.
    /// - Throws: `ReadError` when the file is missing, not this user's, readable by
    ///   others, or not a hand-over.
    public static func claim(
        arguments: [String] = CommandLine.arguments, environment: [String: String] = ProcessInfo.processInfo.environment
    ) throws -> HandedOverActivity? {
        guard let path = location(arguments: arguments, environment: environment) else { return nil }
        let handed = try read(path: path)
        unlink(path)
        return handed
    }

    /// The file named among `arguments` or in the environment, without reading it.
    public static func location(arguments: [String], environment: [String: String]) -> String? {
        for argument in arguments.dropFirst() {
            if argument.hasPrefix("file://"), let url = URL(string: argument), url.isFileURL, url.path.hasSuffix(fileSuffix) {
                return url.path
            }
            if argument.hasPrefix("/"), argument.hasSuffix(fileSuffix) { return argument }
        }
        if let path = environment[environmentVariable], path.hasPrefix("/") { return path }
        return nil
    }

    /// Reads the hand-over file at `path` and checks that it is this user's and private.
    public static func read(path: String) throws -> HandedOverActivity {
        var info = stat()
        guard lstat(path, &info) == 0 else {
            throw ReadError(description: "\(path): \(String(cString: strerror(errno)))")
        }
        guard (info.st_mode & mode_t(S_IFMT)) == mode_t(S_IFREG) else { throw ReadError(description: "\(path) is not a regular file") }
        guard info.st_uid == getuid() else { throw ReadError(description: "\(path) belongs to another user") }
        guard info.st_mode & 0o077 == 0 else {
            throw ReadError(description: "\(path) may be read by others (mode \(String(info.st_mode & 0o777, radix: 8)))")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw ReadError(description: "\(path) cannot be read")
        }
        do {
            let handed = try JSONDecoder().decode(HandedOverActivity.self, from: data)
            guard handed.version == 1 else { throw ReadError(description: "\(path): unknown version \(handed.version)") }
            return handed
        } catch let error as ReadError {
            throw error
        } catch {
            throw ReadError(description: "\(path) is not a hand-over: \(error)")
        }
    }
}
