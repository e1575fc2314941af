import DesktopEntries
import Foundation
import HandoffAgent
import Testing

/// The files `make install` ships for the agent, and the example's desktop entry.
struct ShippedFilesTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    @Test func userUnitBelongsToTheGraphicalSession() throws {
        let lines = Set(try Self.text("systemd/user/handoff-agent.service").split(separator: "\n").map(String.init))
        for line in [
            "PartOf=graphical-session.target", "After=graphical-session.target", "WantedBy=graphical-session.target",
            "ExecStart=/usr/local/bin/handoff-agent", "Restart=on-failure",
        ] {
            #expect(lines.contains(line), "missing \(line)")
        }
    }

    @Test func autostartEntryIsValidAndSkippedUnderSystemd() throws {
        let text = try Self.text("Config/autostart/handoff-agent.desktop")
        let entry = try DesktopEntry.parse(text, path: "handoff-agent.desktop", id: "handoff-agent.desktop")
        #expect(entry.exec?.expand(.init(files: [], urls: [], icon: nil, name: "", desktopFile: "")) == [
            "/usr/local/bin/handoff-agent"
        ])
        #expect(entry.tryExec == "/usr/local/bin/handoff-agent")
        #expect(text.contains("\nX-systemd-skip=true\n"))
        #expect(text.contains("\nX-GNOME-Autostart-enabled=true\n"))
    }

    @Test func exampleEntryDeclaresItsType() throws {
        let entry = try DesktopEntry.parse(
            try Self.text("Examples/ContinuedReader/org.handoff.example.Reader.desktop"), path: "reader.desktop",
            id: "org.handoff.example.Reader.desktop")
        #expect(entry.activityTypes == ["org.handoff.demo.reading"])
        #expect(entry.exec?.takesURLs == true)
    }
}
