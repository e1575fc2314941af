#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import Logging

/// One line per event on standard error: the log of handoffd and handoff-agent.
///
/// Under systemd (`JOURNAL_STREAM` set) each line starts with its syslog
/// priority, `<6>`, which journald turns into the entry's priority; the
/// journal adds its own timestamps. Elsewhere lines carry a time (UTC, to the
/// millisecond) and level.
public struct StderrLogHandler: LogHandler {
    public var logLevel: Logger.Level = .info
    public var metadata: Logger.Metadata = [:]
    public let label: String
    public let journal: Bool

    public init(label: String, journal: Bool = ProcessInfo.processInfo.environment["JOURNAL_STREAM"] != nil) {
        self.label = label
        self.journal = journal
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var text =
            journal
            ? "<\(Self.priority(event.level))>"
            : "\(Date().formatted(Self.timeFormat)) \(event.level) "
        text += event.message.description
        let merged = metadata.merging(event.metadata ?? [:]) { _, new in new }
        if !merged.isEmpty {
            text += " " + merged.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(separator: " ")
        }
        text += "\n"
        Self.writeStandardError(text)
    }

    /// Writes all of `text` to file descriptor 2, as Foundation's `FileHandle.standardError.write`
    /// did: again after EINTR, and a failed write is fatal.
    static func writeStandardError(_ text: String) {
        var text = text
        text.withUTF8 { bytes in
            var offset = 0
            while offset < bytes.count {
                var written: Int
                repeat {
                    written = write(2, bytes.baseAddress! + offset, bytes.count - offset)
                } while written < 0 && errno == EINTR
                if written <= 0 {
                    fatalError("cannot write to standard error: \(String(cString: strerror(errno)))")
                }
                offset += written
            }
        }
    }

    /// 2026-03-14T09:26:53.500Z
    public static let timeFormat = Date.ISO8601FormatStyle(includingFractionalSeconds: true)

    public static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }
}
