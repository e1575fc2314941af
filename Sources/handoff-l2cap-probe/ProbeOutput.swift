import Foundation

/// What the probe prints: progress on stderr, one `RESULT {json}` line on stdout.
enum ProbeOutput {
    static func psm(_ psm: UInt16) -> String { String(format: "0x%04x", psm) }

    static func seconds(_ value: Double) -> String { String(format: "%.3f s", value) }

    static func say(_ line: String) {
        FileHandle.standardError.write(Data("probe: \(line)\n".utf8))
    }

    static func result(_ fields: [String: Any]) {
        let data = (try? JSONSerialization.data(withJSONObject: fields, options: [.sortedKeys])) ?? Data("{}".utf8)
        FileHandle.standardOutput.write(Data("RESULT ".utf8) + data + Data("\n".utf8))
    }
}
