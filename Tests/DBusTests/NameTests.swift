import DBus
import Testing

/// Object paths and the names in message headers: what the specification allows,
/// and one example of each thing it forbids.
@Suite struct NameTests {
    @Test(arguments: ["/", "/a", "/org/bluez/hci0", "/a_b/C9/_", "/0", "/" + String(repeating: "x", count: 500)])
    func acceptsValidObjectPaths(_ text: String) throws {
        #expect(DBusObjectPath.isValid(text))
        #expect(try DBusObjectPath(text).rawValue == text)
    }

    @Test(arguments: ["", "a", "a/b", "//", "/a/", "/a//b", "/a-b", "/a.b", "/ä", "/a b", "/a\0b"])
    func rejectsInvalidObjectPaths(_ text: String) {
        #expect(!DBusObjectPath.isValid(text))
        let error = #expect(throws: DBusError.self) { try DBusObjectPath(text) }
        #expect(error?.is(.invalidArgs) == true)
    }

    @Test func objectPathTreeOperations() throws {
        let adapter: DBusObjectPath = "/org/bluez/hci0"
        #expect(adapter.elements == ["org", "bluez", "hci0"])
        #expect(DBusObjectPath.root.elements.isEmpty)
        #expect(try adapter.appending("dev_1").rawValue == "/org/bluez/hci0/dev_1")
        #expect(try DBusObjectPath.root.appending("org").rawValue == "/org")
        #expect(throws: DBusError.self) { try adapter.appending("a/b") }
        #expect(throws: DBusError.self) { try adapter.appending("") }
        #expect(throws: DBusError.self) { try adapter.appending("dev-1") }
        #expect(adapter.isDescendant(of: "/org/bluez"))
        #expect(adapter.isDescendant(of: .root))
        #expect(!adapter.isDescendant(of: adapter))
        #expect(!DBusObjectPath.root.isDescendant(of: .root))
        #expect(!DBusObjectPath("/org/bluez/hci00").isDescendant(of: adapter))
        #expect(!DBusObjectPath("/org/bluezz").isDescendant(of: "/org/bluez"))
        #expect(DBusObjectPath("/a") < DBusObjectPath("/b"))
        #expect(DBusObjectPath("/org/bluez/hci0/dev_1").parent == adapter)
        #expect(DBusObjectPath("/org").parent == .root)
        #expect(DBusObjectPath.root.parent == .root)
    }

    @Test(arguments: ["org.bluez", "org.bluez.Adapter1", "a.b", "_a._b", "A.B9.C_d", String(repeating: "a.", count: 127) + "b"])
    func acceptsValidInterfaceNames(_ name: String) {
        #expect(DBusNames.isValidInterface(name))
        #expect(DBusNames.isValidErrorName(name))
    }

    @Test(arguments: [
        "", "org", ".org.bluez", "org.bluez.", "org..bluez", "org.9bluez", "org.blu-ez", "org.blüez", "org.bl uez",
        ":1.42", String(repeating: "a.", count: 128) + "b",
    ])
    func rejectsInvalidInterfaceNames(_ name: String) {
        #expect(!DBusNames.isValidInterface(name))
        #expect(!DBusNames.isValidErrorName(name))
    }

    @Test(arguments: ["Get", "RegisterAdvertisement", "_private", "a9", String(repeating: "m", count: 255)])
    func acceptsValidMemberNames(_ name: String) {
        #expect(DBusNames.isValidMember(name))
    }

    @Test(arguments: ["", "9a", "a.b", "a-b", "a b", "ä", String(repeating: "m", count: 256)])
    func rejectsInvalidMemberNames(_ name: String) {
        #expect(!DBusNames.isValidMember(name))
    }

    @Test(arguments: [
        ":1.42", ":1.0", ":a-b.c", "org.bluez", "org.freedesktop.DBus", "com.example-corp.App", "a._b",
        String(repeating: "a.", count: 127) + "b",
    ])
    func acceptsValidBusNames(_ name: String) {
        #expect(DBusNames.isValidBusName(name))
    }

    @Test(arguments: [
        "", ":", ":1", "org", "org.", ".org", "org..bluez", "org.9bluez", "9org.bluez", "org.blüez", ":1..2",
        String(repeating: "a.", count: 128) + "b",
    ])
    func rejectsInvalidBusNames(_ name: String) {
        #expect(!DBusNames.isValidBusName(name))
    }

    @Test func stringsMayHoldAnythingButNUL() {
        #expect(DBusNames.isValidString(""))
        #expect(DBusNames.isValidString("grüße \u{FFFF} 😀"))
        #expect(!DBusNames.isValidString("a\0b"))
    }

    @Test func busAddressesResolveFromTheEnvironment() throws {
        #expect(try DBusBusAddress.system.resolve(environment: [:]) == DBusBusAddress.defaultSystemAddress)
        #expect(try DBusBusAddress.system.resolve(environment: ["DBUS_SYSTEM_BUS_ADDRESS": ""]) == DBusBusAddress.defaultSystemAddress)
        #expect(try DBusBusAddress.system.resolve(environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=/x"]) == "unix:path=/x")
        #expect(try DBusBusAddress.session.resolve(environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/s"]) == "unix:path=/s")
        #expect(try DBusBusAddress.address("tcp:host=h").resolve(environment: [:]) == "tcp:host=h")
        let error = #expect(throws: DBusError.self) { try DBusBusAddress.session.resolve(environment: [:]) }
        #expect(error?.is(.failed) == true)
    }
}
