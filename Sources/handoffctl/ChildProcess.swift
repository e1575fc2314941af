import Foundation

/// Runs another program for `handoffctl` (no shell, standard input from /dev/null) and waits for it.
enum ChildProcess {
    /// Runs `executable` with `arguments`: its exit status. `output` takes its standard output and
    /// `quiet` drops its standard error (otherwise both are handoffctl's); after `timeout` it is terminated.
    /// - Throws: what `Process.run` throws when the program cannot be started.
    static func run(
        _ executable: URL, _ arguments: [String], output: Pipe? = nil, quiet: Bool = false, timeout: Duration? = nil
    ) async throws -> Int32 {
        let process = Process()
        process.executableURL = executable
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        if let output { process.standardOutput = output }
        if quiet { process.standardError = FileHandle.nullDevice }
        return try await withCheckedThrowingContinuation { continuation in
            process.terminationHandler = { finished in continuation.resume(returning: finished.terminationStatus) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(throwing: error)
                return
            }
            if let timeout {
                let seconds = Double(timeout.components.seconds) + Double(timeout.components.attoseconds) / 1e18
                DispatchQueue.global().asyncAfter(deadline: .now() + seconds) { if process.isRunning { process.terminate() } }
            }
        }
    }

    /// The first executable named `name` in `$PATH`.
    static func findInPath(_ name: String, environment: [String: String] = ProcessInfo.processInfo.environment)
        -> URL?
    {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for directory in path.split(separator: ":") where !directory.isEmpty {
            let candidate = URL(fileURLWithPath: String(directory)).appendingPathComponent(name)
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return candidate }
        }
        return nil
    }
}
