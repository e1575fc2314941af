#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// Output helpers: flushed lines, errors, questions.
enum Terminal {
    /// Writes `text` and a newline on standard output at once, unbuffered (for pipes).
    static func printLine(_ text: String) {
        FileHandle.standardOutput.write(Data("\(text)\n".utf8))
    }

    /// Prints `handoffctl: <message>` on standard error.
    static func printError(_ message: String) {
        FileHandle.standardError.write(Data("handoffctl: \(message)\n".utf8))
    }

    /// Whether standard input is a terminal someone can answer questions on.
    static var isInteractive: Bool { isatty(STDIN_FILENO) == 1 }

    /// Asks a yes/no question on standard error; true only for "y" or "yes".
    static func confirm(_ question: String) -> Bool {
        FileHandle.standardError.write(Data("\(question) [y/N] ".utf8))
        guard let answer = readLine() else { return false }
        return ["y", "yes"].contains(answer.trimmingCharacters(in: .whitespaces).lowercased())
    }

    /// The name of the user running this, for a first account's name.
    static var userName: String? {
        if let name = ProcessInfo.processInfo.environment["USER"], !name.isEmpty { return name }
        guard let entry = getpwuid(getuid()), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    /// The login name of `uid`, when it has one.
    static func userName(of uid: UInt32) -> String? {
        guard let entry = getpwuid(uid_t(uid)), let name = entry.pointee.pw_name else { return nil }
        return String(cString: name)
    }

    /// `text` on one line: control characters become spaces, and at most `limit` characters.
    static func singleLine(_ text: String, limit: Int = 48) -> String {
        let flat = String(text.map { $0.isNewline || ($0.asciiValue.map { $0 < 0x20 || $0 == 0x7f } ?? false) ? " " : $0 })
        return flat.count > limit ? String(flat.prefix(limit - 1)) + "…" : flat
    }
}
