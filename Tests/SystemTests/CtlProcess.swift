#if canImport(Glibc)
import Glibc
#endif
import DBusTestSupport
import Foundation

/// Runs the built `handoffctl` as a child process, its output in files of the test's directory.
enum CtlProcess {
    struct Outcome: Sendable {
        /// The exit status; nil when it did not exit in time or died of a signal.
        var status: Int32?
        var stdout: String
        var stderr: String
    }

    static func run(_ arguments: [String], in directory: String, within timeout: Duration = .seconds(60)) async throws
        -> Outcome
    {
        let name = "\(directory)/handoffctl-\(UUID().uuidString.prefix(8))"
        let out = open("\(name).out", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        let err = open("\(name).err", O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o644)
        defer {
            close(out)
            close(err)
        }
        let process = try TestProcess(try BuiltProducts.path(of: "handoffctl"), arguments, stdout: out, stderr: err)
        let status = await process.exitCode(within: timeout)
        process.kill()
        return Outcome(
            status: status,
            stdout: (try? String(contentsOfFile: "\(name).out", encoding: .utf8)) ?? "",
            stderr: (try? String(contentsOfFile: "\(name).err", encoding: .utf8)) ?? "")
    }
}
