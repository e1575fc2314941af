import Foundation
import Testing

@testable import HandoffDaemon

/// The shipped `Config/handoffd.toml` must not drift from the code: it lists
/// every setting, commented out, with exactly the built-in default.
@Suite struct ConfigurationFileTests {
    /// `Config/handoffd.toml` in this checkout.
    static let shippedPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Config/handoffd.toml").path

    private func shippedText() throws -> String {
        try String(contentsOfFile: Self.shippedPath, encoding: .utf8)
    }

    /// Whether `line` is a commented-out setting: `#key = value`.
    private static func isCommentedSetting(_ line: Substring) -> Bool {
        guard line.hasPrefix("#"), let equals = line.firstIndex(of: "=") else { return false }
        let key = line[line.index(after: line.startIndex)..<equals].trimmingCharacters(in: .whitespaces)
        return !key.isEmpty && key.allSatisfy { $0.isLowercase || $0 == "_" }
            && !line.dropFirst().hasPrefix(" ")
    }

    /// The file with every commented-out setting switched on.
    private func uncommented() throws -> String {
        try shippedText().split(separator: "\n", omittingEmptySubsequences: false)
            .map { Self.isCommentedSetting($0) ? String($0.dropFirst()) : String($0) }
            .joined(separator: "\n")
    }

    @Test func shippedFileMeansDefaults() throws {
        #expect(try DaemonConfiguration.parse(shippedText(), source: Self.shippedPath) == .defaults)
    }

    @Test func shippedFileUncommentedStillMeansDefaults() throws {
        #expect(try DaemonConfiguration.parse(uncommented(), source: "uncommented handoffd.toml") == .defaults)
    }

    @Test func shippedFileListsEverySettingOnceInOrder() throws {
        var found: [String] = []
        var section = ""
        for line in try shippedText().split(separator: "\n") {
            if line.hasPrefix("[") {
                section = String(line.dropFirst().dropLast())
                found.append("[\(section)]")
            } else if Self.isCommentedSetting(line) {
                let key = line.dropFirst().prefix { $0 != " " && $0 != "=" }
                found.append("[\(section)] \(key)")
            }
        }
        let expected = ConfigurationSchema.sections.flatMap { section in
            ["[\(section.name)]"] + section.keys.map { "[\(section.name)] \($0)" }
        }
        #expect(found == expected)
    }

    @Test func everySettingHasAnExplanation() throws {
        let lines = try shippedText().split(separator: "\n", omittingEmptySubsequences: false)
        for (index, line) in lines.enumerated() where Self.isCommentedSetting(line) {
            // The line above is prose ("# …") or the setting it pairs with.
            let above = index > 0 ? lines[index - 1] : ""
            #expect(
                above.hasPrefix("# ") || Self.isCommentedSetting(above),
                "no explanation above \(line)")
        }
    }
}
