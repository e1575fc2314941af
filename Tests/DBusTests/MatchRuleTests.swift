import DBus
import Testing

/// `DBusMatchRule` without a bus: the text it sends to AddMatch, its checks, and
/// local matching. (SignalTests checks the same rules against a real bus.)
@Suite struct MatchRuleTests {
    @Test func textListsFieldsInAFixedOrder() {
        let rule = DBusMatchRule(
            sender: "org.bluez", interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged",
            path: "/org/bluez/hci0", destination: ":1.7", arguments: [2: "b", 0: "a"], argumentPaths: [1: "/x/"])
        #expect(
            rule.text
                == "type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties',member='PropertiesChanged',path='/org/bluez/hci0',destination=':1.7',arg0='a',arg2='b',arg1path='/x/'"
        )
        #expect(DBusMatchRule().text == "type='signal'")
        #expect(DBusMatchRule(type: nil).text == "")
        #expect(DBusMatchRule(type: .methodCall, member: "Ping").text == "type='method_call',member='Ping'")
        #expect(DBusMatchRule(type: .methodReturn).text == "type='method_return'")
        #expect(DBusMatchRule(type: .error).text == "type='error'")
        #expect(DBusMatchRule(pathNamespace: "/org/bluez").text == "type='signal',path_namespace='/org/bluez'")
    }

    @Test func textEscapesApostrophes() {
        // The match-rule grammar has no escapes inside quotes: an apostrophe is
        // written by closing the quote, adding \' and reopening it.
        #expect(DBusMatchRule(arguments: [0: "it's"]).text == #"type='signal',arg0='it'\''s'"#)
        #expect(DBusMatchRule(arguments: [0: "'"]).text == #"type='signal',arg0=''\'''"#)
        // Commas, backslashes and double quotes need nothing inside quotes.
        #expect(DBusMatchRule(arguments: [0: #"a,b\c"d"#]).text == #"type='signal',arg0='a,b\c"d'"#)
    }

    @Test func validateRejectsEachBadField() throws {
        try DBusMatchRule(sender: ":1.5", interface: "a.b", member: "M", arguments: [63: "x"]).validate()
        let bad: [DBusMatchRule] = [
            DBusMatchRule(sender: "not a name"),
            DBusMatchRule(interface: "nodots"),
            DBusMatchRule(member: "a.b"),
            DBusMatchRule(destination: "9.x"),
            DBusMatchRule(path: "/a", pathNamespace: "/a"),
            DBusMatchRule(arguments: [64: "x"]),
            DBusMatchRule(arguments: [-1: "x"]),
            DBusMatchRule(argumentPaths: [64: "/x"]),
            DBusMatchRule(arguments: [0: "nul\0"]),
        ]
        for rule in bad {
            let error = #expect(throws: DBusError.self, "\(rule.text)") { try rule.validate() }
            #expect(error?.is(.matchRuleInvalid) == true)
        }
    }

    static func signal(
        sender: String? = ":1.9", path: DBusObjectPath = "/org/bluez/hci0", interface: String = "org.example.I",
        member: String = "Changed", destination: String? = nil, body: [DBusValue] = []
    ) -> DBusMessage {
        var message = DBusMessage.signal(path: path, interface: interface, member: member, body: body)
        message.sender = sender
        message.destination = destination
        return message
    }

    @Test func matchesEachFieldLocally() {
        let message = Self.signal(destination: ":1.3", body: [.string("org.example.I"), .objectPath("/org/bluez/hci0/dev_1"), .uint32(3)])
        #expect(DBusMatchRule().matches(message))
        #expect(DBusMatchRule(type: nil).matches(message))
        #expect(!DBusMatchRule(type: .methodCall).matches(message))
        #expect(DBusMatchRule(sender: ":1.9").matches(message))
        #expect(!DBusMatchRule(sender: ":1.8").matches(message))
        #expect(DBusMatchRule(interface: "org.example.I").matches(message))
        #expect(!DBusMatchRule(interface: "org.example.J").matches(message))
        #expect(DBusMatchRule(member: "Changed").matches(message))
        #expect(!DBusMatchRule(member: "Other").matches(message))
        #expect(DBusMatchRule(path: "/org/bluez/hci0").matches(message))
        #expect(!DBusMatchRule(path: "/org/bluez").matches(message))
        #expect(DBusMatchRule(pathNamespace: "/org/bluez").matches(message))
        #expect(DBusMatchRule(pathNamespace: "/org/bluez/hci0").matches(message))
        #expect(DBusMatchRule(pathNamespace: .root).matches(message))
        #expect(!DBusMatchRule(pathNamespace: "/org/bluez/hci").matches(message))
        #expect(!DBusMatchRule(pathNamespace: "/org/bluez/hci0/dev").matches(message))
        #expect(DBusMatchRule(destination: ":1.3").matches(message))
        #expect(!DBusMatchRule(destination: ":1.4").matches(message))
        #expect(DBusMatchRule(arguments: [0: "org.example.I"]).matches(message))
        #expect(!DBusMatchRule(arguments: [0: "org.example"]).matches(message))
        // argN matches strings only, not object paths or numbers, and not past the end.
        #expect(!DBusMatchRule(arguments: [1: "/org/bluez/hci0/dev_1"]).matches(message))
        #expect(!DBusMatchRule(arguments: [2: "3"]).matches(message))
        #expect(!DBusMatchRule(arguments: [3: "x"]).matches(message))
        // Every field must match.
        #expect(!DBusMatchRule(interface: "org.example.I", member: "Other").matches(message))
    }

    @Test func matchesPathArguments() {
        let message = Self.signal(body: [.objectPath("/org/bluez/hci0/dev_1"), .string("/a/b/")])
        #expect(DBusMatchRule(argumentPaths: [0: "/org/bluez/hci0/dev_1"]).matches(message))
        #expect(DBusMatchRule(argumentPaths: [0: "/org/bluez/"]).matches(message))
        #expect(DBusMatchRule(argumentPaths: [0: "/"]).matches(message))
        #expect(!DBusMatchRule(argumentPaths: [0: "/org/bluez"]).matches(message))
        #expect(!DBusMatchRule(argumentPaths: [0: "/org/bluez/hci0/dev_1/x"]).matches(message))
        // An argument ending in '/' matches rules it is a prefix of.
        #expect(DBusMatchRule(argumentPaths: [1: "/a/b/c"]).matches(message))
        #expect(DBusMatchRule(argumentPaths: [1: "/a/"]).matches(message))
        #expect(!DBusMatchRule(argumentPaths: [1: "/a/bc"]).matches(message))
        #expect(!DBusMatchRule(argumentPaths: [2: "/"]).matches(message))
    }

    @Test func matchesAWellKnownSenderThroughItsOwner() {
        let message = Self.signal(sender: ":1.9")
        let rule = DBusMatchRule(sender: "org.bluez")
        #expect(!rule.matches(message))
        #expect(!rule.matches(message, ownerOf: { _ in nil }))
        #expect(rule.matches(message, ownerOf: { $0 == "org.bluez" ? ":1.9" : nil }))
        #expect(!rule.matches(message, ownerOf: { _ in ":1.10" }))
        // Unique names and the bus's own name are never looked up.
        #expect(!DBusMatchRule(sender: ":1.8").matches(message, ownerOf: { _ in ":1.9" }))
        #expect(!DBusMatchRule(sender: DBusConnection.busName).matches(message, ownerOf: { _ in ":1.9" }))
        #expect(!rule.matches(Self.signal(sender: nil), ownerOf: { _ in ":1.9" }))
    }
}
