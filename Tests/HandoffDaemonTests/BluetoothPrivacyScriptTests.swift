import Foundation
import Testing

@testable import HandoffDaemon

/// `set_bluetooth_privacy` from scripts/bluetooth-privacy.sh, which `make install`
/// runs on /etc/bluetooth/main.conf, run here by bash on files in a scratch
/// directory. The result is read back with `BluetoothdPrivacy`, the parser that
/// reads main.conf as bluetoothd 5.66 does.
@Suite struct BluetoothPrivacyScriptTests {
    static let script = SystemdUnitTests.repository.appendingPathComponent("scripts/bluetooth-privacy.sh").path

    /// Debian's main.conf in short: the key commented out in [General], another group after it.
    static let debianLike = """
        [General]

        # Default adapter name
        #Name = BlueZ

        # Default privacy setting.
        # Possible values for LE mode: "off", "network/on", "device"
        #Privacy = off

        #JustWorksRepairing = never

        [BR]
        #PageScanType =

        [Policy]
        #AutoEnable=true

        """

    /// A scratch directory, removed after `body`.
    private func withScratch(_ body: (String) throws -> Void) throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("handoff-btconf-\(UUID())").path
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: path) }
        try body(path)
    }

    /// Runs the function on `file`; returns its output and whether it says it changed the file.
    private func run(on file: String) throws -> (output: String, changed: Bool) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [
            "-c", #"set -euo pipefail; source "$1"; set_bluetooth_privacy "$2"; echo "changed=$BLUETOOTH_PRIVACY_CHANGED""#,
            "test", Self.script, file,
        ]
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        let output = String(decoding: data, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(output)")
        return (output, output.hasSuffix("changed=yes\n"))
    }

    private func read(_ path: String) throws -> String { try String(contentsOfFile: path, encoding: .utf8) }

    @Test func addsTheKeyBelowTheCommentedOneAndChangesNothingElse() throws {
        try withScratch { directory in
            let file = "\(directory)/main.conf"
            try Self.debianLike.write(toFile: file, atomically: true, encoding: .utf8)
            let first = try run(on: file)
            #expect(first.changed)
            #expect(first.output.contains("set [General] Privacy = device in \(file) (was: not set)"))
            #expect(first.output.contains("kept the original as \(file).handoff-orig"))
            let edited = try read(file)
            #expect(edited == Self.debianLike.replacingOccurrences(of: "#Privacy = off\n", with: "#Privacy = off\nPrivacy = device\n"))
            #expect(BluetoothdPrivacy(mainConf: edited).isPrivate)
            #expect(try read("\(file).handoff-orig") == Self.debianLike)

            // Idempotent.
            let second = try run(on: file)
            #expect(!second.changed && second.output.contains("already has [General] Privacy = device"))
            #expect(try read(file) == edited)
        }
    }

    @Test func rewritesAnActiveValueInGeneralOnlyAndKeepsTheFirstBackup() throws {
        try withScratch { directory in
            let file = "\(directory)/main.conf"
            let original = "[General]\nName = laptop\n  Privacy=limited-device\nPrivacyMode = x\n[Policy]\nPrivacy = off\n"
            try original.write(toFile: file, atomically: true, encoding: .utf8)
            let outcome = try run(on: file)
            #expect(outcome.changed && outcome.output.contains("(was: Privacy = limited-device)"), "\(outcome.output)")
            #expect(try read(file) == "[General]\nName = laptop\nPrivacy = device\nPrivacyMode = x\n[Policy]\nPrivacy = off\n")
            // Someone turns it off again: the next run fixes it, the backup stays the very first file.
            try "[General]\nPrivacy = Device\n".write(toFile: file, atomically: true, encoding: .utf8)
            #expect(try run(on: file).changed)
            #expect(try read(file) == "[General]\nPrivacy = device\n")
            #expect(try read("\(file).handoff-orig") == original)
        }
    }

    @Test func addsGeneralWhenThereIsNoneOrTheHeaderOnly() throws {
        try withScratch { directory in
            let none = "\(directory)/none.conf"
            try "[Policy]\nAutoEnable=true\n".write(toFile: none, atomically: true, encoding: .utf8)
            #expect(try run(on: none).changed)
            #expect(try read(none) == "[Policy]\nAutoEnable=true\n\n[General]\nPrivacy = device\n")
            #expect(BluetoothdPrivacy(mainConf: try read(none)).isPrivate)

            let header = "\(directory)/header.conf"
            try "# comment\n[General]\nName = x\n".write(toFile: header, atomically: true, encoding: .utf8)
            #expect(try run(on: header).changed)
            #expect(try read(header) == "# comment\n[General]\nPrivacy = device\nName = x\n")
        }
    }

    @Test func createsAMissingFileButNotAMissingDirectory() throws {
        try withScratch { directory in
            let file = "\(directory)/main.conf"
            let outcome = try run(on: file)
            #expect(outcome.changed && outcome.output.contains("created \(file)"))
            #expect(try read(file) == "[General]\nPrivacy = device\n")
            #expect(!FileManager.default.fileExists(atPath: "\(file).handoff-orig"))

            let absent = "\(directory)/no-bluez/main.conf"
            let skipped = try run(on: absent)
            #expect(!skipped.changed && skipped.output.contains("skipped \(absent)"))
            #expect(!FileManager.default.fileExists(atPath: "\(directory)/no-bluez"))
        }
    }

    @Test func installRefusesUnknownOptions() throws {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/bash")
        process.arguments = [SystemdUnitTests.repository.appendingPathComponent("scripts/install.sh").path, "--bluetooth"]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 2)
    }
}
