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
        guard let executable = ChildProcess.findInPath("bluetoothctl") else { return nil }
        let output = Pipe()
        // bluetoothctl --version never waits for bluetoothd; the timeout only guards against a stranger program.
        guard let status = try? await ChildProcess.run(executable, ["--version"], output: output, quiet: true, timeout: .seconds(5)),
            status == 0
        else { return nil }
        let data = output.fileHandleForReading.readDataToEndOfFile()
        return parse(String(decoding: data, as: UTF8.self))
    }
}
