import Foundation
import Testing

@testable import HandoffDaemon

/// Reading the configuration from disk.
@Suite struct ConfigurationLoadingTests {
    /// A fresh directory, removed when `body` returns.
    @discardableResult
    private func withTemporaryDirectory<R>(_ body: (String) throws -> R) throws -> R {
        let directory = FileManager.default.temporaryDirectory
            .appendingPathComponent("handoff-config-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        return try body(directory)
    }

    @Test func missingDefaultFileMeansDefaults() throws {
        try withTemporaryDirectory { directory in
            let configuration = try DaemonConfiguration.load(from: nil, defaultPath: "\(directory)/handoffd.toml")
            #expect(configuration == .defaults)
        }
    }

    @Test func missingExplicitFileIsAnError() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/handoffd.toml"
            #expect(throws: ConfigurationError(source: path, problem: .notFound)) {
                try DaemonConfiguration.load(from: path, defaultPath: path)
            }
            let error = ConfigurationError(source: path, problem: .notFound)
            #expect(error.description == "\(path): no such file")
        }
    }

    @Test func explicitFileIsParsed() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/custom.toml"
            try "[log]\nlevel = \"trace\"\n".write(toFile: path, atomically: true, encoding: .utf8)
            #expect(try DaemonConfiguration.load(from: path).logLevel == .trace)
        }
    }

    @Test func defaultFileIsParsedWhenPresent() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/handoffd.toml"
            try "[beacon]\nepoch_seconds = 120\n".write(toFile: path, atomically: true, encoding: .utf8)
            #expect(try DaemonConfiguration.load(from: nil, defaultPath: path).epochSeconds == 120)
        }
    }

    @Test func errorsNameTheFile() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/bad.toml"
            try "[socket]\nmode = 660\n".write(toFile: path, atomically: true, encoding: .utf8)
            let error = #expect(throws: ConfigurationError.self) { try DaemonConfiguration.load(from: path) }
            #expect(error?.description.hasPrefix("\(path):2: [socket] mode: ") == true)
        }
    }

    @Test func directoryIsUnreadable() throws {
        try withTemporaryDirectory { directory in
            #expect(throws: ConfigurationError(source: directory, problem: .unreadable("not a regular file"))) {
                try DaemonConfiguration.load(from: directory)
            }
        }
    }

    @Test func invalidUTF8IsUnreadable() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/latin1.toml"
            try Data([0x23, 0x20, 0xE9, 0x0A]).write(to: URL(fileURLWithPath: path))
            #expect(throws: ConfigurationError(source: path, problem: .unreadable("not UTF-8 text"))) {
                try DaemonConfiguration.load(from: path)
            }
        }
    }

    @Test func largeFilesAreReadWhole() throws {
        try withTemporaryDirectory { directory in
            let path = "\(directory)/padded.toml"
            let padding = String(repeating: "# padding line to cross the read buffer size\n", count: 400)
            try (padding + "[nearby]\nregistry_cap = 7\n").write(toFile: path, atomically: true, encoding: .utf8)
            #expect(try DaemonConfiguration.load(from: path).nearbyRegistryCap == 7)
        }
    }
}
