import Foundation
import Testing

/// The shipped systemd files: `systemd/handoffd.service` and `systemd/handoffd.sysusers.conf`.
///
/// These run systemd's own tools (from Debian's `systemd` package). They work
/// without systemd running as PID 1: `verify` and `security --offline=true`
/// only load the unit file, and `systemd-sysusers --root=` writes to a scratch tree.
@Suite struct SystemdUnitTests {
    static let repository = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let unitPath = repository.appendingPathComponent("systemd/handoffd.service").path
    static let sysusersPath = repository.appendingPathComponent("systemd/handoffd.sysusers.conf").path

    /// The worst exposure level `systemd-analyze security` may give the unit.
    /// It is 1.1 now; a change that weakens the sandbox fails here.
    static let exposureLimit = 1.5

    /// Output and exit status of a tool.
    private struct Run {
        var status: Int32
        var output: String
    }

    private static func tool(_ name: String) throws -> String {
        for directory in ["/usr/bin", "/bin", "/usr/sbin", "/sbin"] {
            let path = "\(directory)/\(name)"
            if FileManager.default.isExecutableFile(atPath: path) { return path }
        }
        throw ToolMissing(name: name)
    }

    private struct ToolMissing: Error, CustomStringConvertible {
        var name: String
        var description: String { "\(name) not found: install Debian's systemd package (make deps)" }
    }

    /// Runs `tool` with `arguments` in `directory`, stdout and stderr together.
    private static func run(_ tool: String, _ arguments: [String], in directory: String? = nil) throws -> Run {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try Self.tool(tool))
        process.arguments = arguments
        if let directory { process.currentDirectoryURL = URL(fileURLWithPath: directory) }
        var environment = ProcessInfo.processInfo.environment
        environment["SYSTEMD_COLORS"] = "0"
        environment["SYSTEMD_PAGER"] = "cat"
        environment["SYSTEMD_LOG_COLOR"] = "0"
        process.environment = environment
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Run(status: process.terminationStatus, output: String(decoding: data, as: UTF8.self))
    }

    /// A scratch directory holding the unit, with ExecStart pointing at a binary
    /// that exists (verify checks it), removed after `body`.
    private func withVerifiableUnit<R>(_ body: (_ directory: String, _ unit: String) throws -> R) throws -> R {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("handoff-unit-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = try String(contentsOfFile: Self.unitPath, encoding: .utf8)
        let rewritten = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
            line.hasPrefix("ExecStart=") ? "ExecStart=/bin/true" : String(line)
        }.joined(separator: "\n")
        let unit = "\(directory)/handoffd.service"
        try rewritten.write(toFile: unit, atomically: true, encoding: .utf8)
        return try body(directory, unit)
    }

    @Test func execStartIsWhatMakeInstallRewrites() throws {
        // scripts/install.sh replaces exactly this line when PREFIX differs.
        let lines = try String(contentsOfFile: Self.unitPath, encoding: .utf8).split(separator: "\n")
        #expect(lines.filter { $0.hasPrefix("ExecStart=") } == ["ExecStart=/usr/local/bin/handoffd"])
    }

    @Test func unitVerifiesWithoutWarnings() throws {
        try withVerifiableUnit { directory, unit in
            // --man=no: the pages of Documentation= are built and installed by make install and
            // the package; the package's install test (scripts/deb-install-test.sh) verifies the
            // installed unit with them.
            let result = try Self.run("systemd-analyze", ["verify", "--man=no", unit], in: directory)
            #expect(result.status == 0, "systemd-analyze verify: \(result.output)")
            let complaints = result.output.split(separator: "\n").filter { $0.contains("handoffd") }
            #expect(complaints.isEmpty, "systemd-analyze verify: \(result.output)")
        }
    }

    @Test func verifyCatchesMistakes() throws {
        // Proof that the check above can fail: a misspelt directive.
        try withVerifiableUnit { directory, unit in
            let text = try String(contentsOfFile: unit, encoding: .utf8)
            try text.replacingOccurrences(of: "ProtectHome=yes", with: "ProtectHom=yes")
                .write(toFile: unit, atomically: true, encoding: .utf8)
            let result = try Self.run("systemd-analyze", ["verify", "--man=no", unit], in: directory)
            #expect(result.output.contains("ProtectHom"), "\(result.output)")
        }
    }

    @Test func sandboxExposureIsLow() throws {
        try withVerifiableUnit { directory, unit in
            let result = try Self.run("systemd-analyze", ["security", "--offline=true", unit], in: directory)
            #expect(result.status == 0, "\(result.output)")
            let summary = try #require(
                result.output.split(separator: "\n").first { $0.contains("Overall exposure level") },
                "no summary in: \(result.output)")
            // "→ Overall exposure level for handoffd.service: 1.1 OK 🙂"
            let figures = summary.split(separator: ":").last?.split(separator: " ").first
            let level = try #require(figures.flatMap { Double($0) }, "cannot read: \(summary)")
            #expect(level <= Self.exposureLimit, "\(result.output)")
        }
    }

    @Test func sysusersCreatesTheAccount() throws {
        let root = FileManager.default.temporaryDirectory
            .appendingPathComponent("handoff-sysusers-\(UUID().uuidString.prefix(8))").path
        try FileManager.default.createDirectory(atPath: "\(root)/etc", withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root) }

        let result = try Self.run("systemd-sysusers", ["--root=\(root)", Self.sysusersPath])
        #expect(result.status == 0, "\(result.output)")
        let passwd = try String(contentsOfFile: "\(root)/etc/passwd", encoding: .utf8)
        let group = try String(contentsOfFile: "\(root)/etc/group", encoding: .utf8)
        let user = try #require(passwd.split(separator: "\n").first { $0.hasPrefix("handoff:") })
        let fields = user.split(separator: ":", omittingEmptySubsequences: false)
        #expect(fields.count == 7)
        let uid = try #require(Int(fields[2]))
        #expect(uid > 0 && uid < 1000, "a system account, not \(uid)")
        #expect(fields[5] == "/var/lib/handoffd")
        #expect(fields[6].hasSuffix("nologin"))
        let groupLine = try #require(group.split(separator: "\n").first { $0.hasPrefix("handoff:") })
        #expect(groupLine.split(separator: ":", omittingEmptySubsequences: false)[2] == fields[3])
    }
}
