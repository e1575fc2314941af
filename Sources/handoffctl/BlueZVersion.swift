import Foundation

/// The installed BlueZ's version, as `bluetoothctl --version` prints it ("bluetoothctl: 5.66"), for
/// `doctor`: bluetoothd itself tells no client its version.
struct BlueZVersion: Comparable, CustomStringConvertible, Sendable {
    var major: Int
    var minor: Int

    var description: String { "\(major).\(minor)" }

    static func < (a: BlueZVersion, b: BlueZVersion) -> Bool { (a.major, a.minor) < (b.major, b.minor) }

    /// The version in `text`: its last word, `MAJOR.MINOR`; nil when there is none.
    static func parse(_ text: String) -> BlueZVersion? {
        guard let word = text.split(whereSeparator: \.isWhitespace).last else { return nil }
        let parts = word.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count >= 2, let major = Int(parts[0]), let minor = Int(parts[1]) else { return nil }
        return BlueZVersion(major: major, minor: minor)
    }

    /// What `bluetoothctl --version` (the first in `$PATH`) says; nil when it is not installed, fails or
    /// says nothing readable within 5 s.
    static func installed() async -> BlueZVersion? {
        guard let executable = WebOpener.findInPath("bluetoothctl") else { return nil }
        let process = Process()
        process.executableURL = executable
        process.arguments = ["--version"]
        process.standardInput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        let output = Pipe()
        process.standardOutput = output
        let finished: Bool = await withCheckedContinuation { continuation in
            process.terminationHandler = { _ in continuation.resume(returning: true) }
            do {
                try process.run()
            } catch {
                process.terminationHandler = nil
                continuation.resume(returning: false)
                return
            }
            // bluetoothctl --version never waits for bluetoothd; the timer only guards against a stranger program.
            DispatchQueue.global().asyncAfter(deadline: .now() + 5) { if process.isRunning { process.terminate() } }
        }
        guard finished, process.terminationStatus == 0 else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        return parse(String(decoding: data, as: UTF8.self))
    }
}
