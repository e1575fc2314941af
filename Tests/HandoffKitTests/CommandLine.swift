import Foundation
import Testing

/// Runs the `handoffctl` built next to the test bundle.
enum HandoffCtl {
    /// The binary, when it was built (`swift build --build-tests` builds it).
    static let executable: URL? = {
        let bundleDirectory = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent()
        for directory in [bundleDirectory, bundleDirectory.deletingLastPathComponent()] {
            let candidate = directory.appendingPathComponent("handoffctl")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }()

    static var isAvailable: Bool { executable != nil }

    /// What a run printed and how it ended.
    struct Outcome: Sendable {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// Starts `handoffctl arguments…` with standard input from /dev/null.
    static func start(_ arguments: [String], environment: [String: String] = [:]) throws -> (Process, Pipe, Pipe) {
        let process = Process()
        guard let executable else { throw CocoaError(.fileNoSuchFile) }
        process.executableURL = executable
        process.arguments = arguments
        var env = ProcessInfo.processInfo.environment
        env.removeValue(forKey: "HANDOFF_SOCKET")
        // No desktop entries of the machine's: a test that wants some passes its own directories.
        env["XDG_DATA_HOME"] = "/nonexistent/handoffctl-tests/data"
        env["XDG_DATA_DIRS"] = "/nonexistent/handoffctl-tests/system"
        env.merge(environment) { $1 }
        process.environment = env
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, out, err)
    }

    /// Waits (at most 20 seconds) for a started run to end.
    static func finish(_ process: Process, _ out: Pipe, _ err: Pipe) async throws -> Outcome {
        for _ in 0..<2000 where process.isRunning {
            try await Task.sleep(for: .milliseconds(10))
        }
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            Issue.record("handoffctl did not exit in time")
        }
        process.waitUntilExit()
        let stdout = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        let stderr = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        return Outcome(status: process.terminationStatus, stdout: stdout, stderr: stderr)
    }

    /// Runs `handoffctl arguments…` to the end.
    static func run(_ arguments: [String], environment: [String: String] = [:]) async throws -> Outcome {
        let (process, out, err) = try start(arguments, environment: environment)
        return try await finish(process, out, err)
    }
}
