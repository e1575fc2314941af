#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation
import Testing

/// handoffd's command-line overrides are checked before anything starts.
@Suite struct CommandLineTests {
    /// Runs handoffd with `arguments` and returns its exit status and standard error.
    func run(_ arguments: [String]) async throws -> (Int32?, String) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("handoffd-cli-\(UUID())")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let config = directory.appendingPathComponent("handoffd.toml").path
        try "".write(toFile: config, atomically: true, encoding: .utf8)
        let errPath = directory.appendingPathComponent("stderr").path
        let err = open(errPath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer { Glibc.close(err) }
        let process = try TestProcess(
            try BuiltProducts.path(of: "handoffd"), ["--config", config] + arguments, stdout: err, stderr: err)
        let status = await process.exitCode(within: .seconds(20))
        if status == nil { process.kill() }
        return (status, (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? "")
    }

    @Test(arguments: [
        (["--epoch-seconds", "0"], "--epoch-seconds must be 5 to 86400, not 0"),
        (["--epoch-seconds", "86401"], "--epoch-seconds must be 5 to 86400, not 86401"),
        (["--expiry-seconds", "0"], "--expiry-seconds must be at least 1, not 0"),
    ])
    func anOverrideOutOfRangeIsAUsageError(arguments: [String], message: String) async throws {
        let (status, stderr) = try await run(arguments + ["--check-config"])
        #expect(status == 64, "stderr: \(stderr)")
        #expect(stderr.contains(message), "stderr: \(stderr)")
    }

    @Test func overridesInRangeAreAccepted() async throws {
        let (status, stderr) = try await run(["--epoch-seconds", "5", "--expiry-seconds", "3", "--check-config"])
        #expect(status == 0, "stderr: \(stderr)")
    }
}
