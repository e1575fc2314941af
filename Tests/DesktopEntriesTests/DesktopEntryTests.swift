import DesktopEntries
import Foundation
import Testing

struct ExecLineTests {
    let context = ExecLine.Context(
        files: ["/run/f.json"], urls: ["file:///run/f.json"], icon: "ic", name: "My App", desktopFile: "/a/b.desktop")

    @Test func quotingAndFieldCodes() throws {
        let line = try ExecLine(#"app --x "a b" "c\"d\`e\$f\\g" 100%% %U %c %k %i %d"#)
        #expect(line.expand(context) == [
            "app", "--x", "a b", #"c"d`e$f\g"#, "100%", "file:///run/f.json", "My App", "/a/b.desktop", "--icon", "ic",
        ])
        #expect(try ExecLine("app --file=%f").expand(context) == ["app", "--file=/run/f.json"])
        #expect(try ExecLine("app").expand(context) == ["app"])
    }

    @Test(arguments: [
        (#"app "open"#, "a double quote is not closed"),
        ("app a;b", "the reserved character ; must be inside double quotes"),
        ("app $HOME", "the reserved character $ must be inside double quotes"),
        ("app %z", "unknown field code %z"),
        ("app %u %f", "more than one of %f, %F, %u, %U"),
        ("app x%U", "%U must be an argument on its own"),
        (#"app "a\nb""#, #"inside quotes, only \", \`, \$ and \\ are escapes (found \n)"#),
        ("", "no program"),
    ])
    func malformed(_ text: String, _ reason: String) {
        #expect(throws: ExecLineError(reason)) { try ExecLine(text) }
    }
}

struct DesktopEntryParsingTests {
    @Test func typesIconAndActivation() throws {
        let entry = try DesktopEntry.parse(
            """
            # comment
            [Desktop Entry]
            Type=Application
            Name=Reader
            Name[de]=Leser
            Icon=/opt/reader/icon.png
            DBusActivatable=true
            X-Handoff-ActivityTypes=org.example.reading;not a type;org.example.editing;org.example.reading
            Exec=reader\\s--new %u

            [Desktop Action New]
            Name=New
            Exec=reader --new
            """, path: "/x/org.example.Reader.desktop", id: "org.example.Reader.desktop")
        #expect(entry.activityTypes == ["org.example.reading", "org.example.editing"])
        #expect(entry.invalidActivityTypes == ["not a type"])
        #expect(entry.icon == "/opt/reader/icon.png")
        #expect(entry.dbusActivatable)
        #expect(entry.busName == "org.example.Reader")
        #expect(entry.objectPath == "/org/example/Reader")
        #expect(entry.exec?.expand(.init(files: [], urls: ["u"], icon: nil, name: "", desktopFile: "")) == ["reader", "--new", "u"])
    }

    @Test(arguments: [
        ("Type=Application\n", "1: a key before the [Desktop Entry] group"),
        ("[Other]\nType=Application\n", "1: the first group must be [Desktop Entry]"),
        ("[Desktop Entry]\nType=Application\nName=A\nName=B\nExec=a\n", "4: the key Name appears twice"),
        ("[Desktop Entry]\nType=Application\nExec=a\n", ": no Name key"),
        ("[Desktop Entry]\nType=Application\nName=A\n", ": an Application needs Exec (or DBusActivatable=true)"),
        ("[Desktop Entry]\nType=Application\nName=A\nExec=a\nHidden=yes\n", "5: Hidden must be true or false, not \"yes\""),
    ])
    func malformed(_ text: String, _ suffix: String) {
        do {
            _ = try DesktopEntry.parse(text, path: "/x/a.desktop", id: "a.desktop")
            Issue.record("parsed \(text)")
        } catch {
            #expect("\(error)".hasPrefix("/x/a.desktop"))
            #expect("\(error)".hasSuffix(suffix), "\(error)")
        }
    }
}
