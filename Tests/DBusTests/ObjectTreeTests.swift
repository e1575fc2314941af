import DBus
import DBusTestSupport
import Foundation
import Testing

#if canImport(FoundationXML)
import FoundationXML
#endif

/// ObjectManager and Introspectable, served for our exported tree.
@Suite(.timeLimit(.minutes(1))) struct ObjectTreeTests {
    static let managedType = DBusType.array(
        .dictEntry(key: .objectPath, value: .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant))))))

    static func child(_ name: String, level: Int32 = 1) -> [DBusInterface] {
        [
            DBusInterface(
                localInterface,
                properties: [
                    DBusProperty("Name", name), DBusProperty("Level", level, access: .readwrite),
                    DBusProperty("Secret", type: .string, value: .string("s"), access: .write),
                ]),
            DBusInterface("org.handoff.Test.Other"),
        ]
    }

    @Test func getManagedObjectsAndItsSignals() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            try await server.addObjectManager(at: "/om")
            let signals = try await client.signals(
                matching: DBusMatchRule(sender: server.uniqueName, interface: "org.freedesktop.DBus.ObjectManager"))
            var received = signals.makeAsyncIterator()

            let managed = { () async throws -> DBusMessage in
                try await client.call(
                    destination: server.uniqueName, path: "/om", interface: "org.freedesktop.DBus.ObjectManager",
                    member: "GetManagedObjects")
            }
            let empty = try await managed()
            #expect(empty.signature.rawValue == Self.managedType.signature)
            #expect(try empty.decode([DBusObjectPath: [String: [String: DBusValue]]].self).isEmpty)

            let one = try await server.export("/om/one", interfaces: Self.child("one"))
            let added = try #require(try await received.next())
            #expect(added.member == "InterfacesAdded" && added.path == "/om")
            #expect(added.signature == "oa{sa{sv}}")
            let (addedPath, addedInterfaces) = try added.decode(DBusObjectPath.self, [String: [String: DBusValue]].self)
            #expect(addedPath == "/om/one")
            #expect(addedInterfaces == [localInterface: ["Name": .string("one"), "Level": .int32(1)], "org.handoff.Test.Other": [:]])

            _ = try await server.export("/om/two/deeper", interfaces: Self.child("deeper", level: 3))
            _ = try #require(try await received.next())
            // Outside the manager's subtree: neither listed nor announced.
            _ = try await server.export("/elsewhere", interfaces: Self.child("elsewhere"))
            _ = try await server.export("/omx", interfaces: Self.child("omx"))

            let objects = try await managed().decode([DBusObjectPath: [String: [String: DBusValue]]].self)
            #expect(objects == [
                "/om/one": [localInterface: ["Name": .string("one"), "Level": .int32(1)], "org.handoff.Test.Other": [:]],
                "/om/two/deeper": [localInterface: ["Name": .string("deeper"), "Level": .int32(3)], "org.handoff.Test.Other": [:]],
            ])
            // The listing shows current values.
            try await one.setProperty("Level", of: localInterface, to: .int32(2))
            let changed = try await managed().decode([DBusObjectPath: [String: [String: DBusValue]]].self)
            #expect(changed["/om/one"]?[localInterface]?["Level"] == .int32(2))

            await one.unexport()
            let removed = try #require(try await received.next())
            #expect(removed.member == "InterfacesRemoved" && removed.path == "/om")
            let (removedPath, removedInterfaces) = try removed.decode(DBusObjectPath.self, [String].self)
            #expect(removedPath == "/om/one")
            #expect(removedInterfaces == [localInterface, "org.handoff.Test.Other"])
            #expect(try await managed().decode([DBusObjectPath: [String: [String: DBusValue]]].self).keys.sorted() == ["/om/two/deeper"])

            try await server.removeObjectManager(at: "/om")
            let error = await #expect(throws: DBusError.self) { _ = try await managed() }
            #expect(error?.is(.unknownObject) == true)
        }
    }

    @Test func nestedManagersAnnounceToTheNearestOne() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            try await server.addObjectManager(at: "/")
            try await server.addObjectManager(at: "/org/bluez")
            let signals = try await server.signals(
                matching: DBusMatchRule(sender: server.uniqueName, interface: "org.freedesktop.DBus.ObjectManager"))
            var received = signals.makeAsyncIterator()
            _ = try await server.export("/org/bluez/hci0", interfaces: Self.child("hci0"))
            _ = try await server.export("/other", interfaces: Self.child("other"))
            #expect(try await received.next()?.path == "/org/bluez")
            #expect(try await received.next()?.path == "/")
        }
    }

    @Test func pythonListsOurManagedObjects() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            try await t.startPythonPeer(watchingWith: server)
            try await server.addObjectManager(at: "/om")
            try await server.callPeer("Watch", [.string("type='signal',interface='org.freedesktop.DBus.ObjectManager'")])
            let child = try await server.export("/om/child1", interfaces: [DBusInterface(localInterface, properties: [DBusProperty("Name", "one")])])
            expectAllPassed(try await server.pythonChecks("object-manager", against: "/om"), atLeast: 1)
            await child.unexport()
            let seen = try await server.callPeer("Received").decode([String].self).filter { $0.hasPrefix("org.freedesktop.DBus.ObjectManager.") }
            #expect(seen == [
                "org.freedesktop.DBus.ObjectManager.InterfacesAdded "
                    + describe([.objectPath("/om/child1"), .dictionary(key: .string, value: .array(.dictEntry(key: .string, value: .variant)), [(.string(localInterface), .vardict(["Name": .string("one")]))])]),
                "org.freedesktop.DBus.ObjectManager.InterfacesRemoved " + describe([.objectPath("/om/child1"), .strings([localInterface])]),
            ])
        }
    }

    // MARK: Introspection

    struct Node {
        var interfaces: [String: XMLElement] = [:]
        var children: [String] = []
    }

    static func introspect(_ connection: DBusConnection, _ destination: String, _ path: DBusObjectPath) async throws -> Node {
        let xml = try await connection.call(
            destination: destination, path: path, interface: "org.freedesktop.DBus.Introspectable", member: "Introspect"
        ).decode(String.self)
        #expect(xml.hasPrefix("<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\""))
        let document = try XMLDocument(xmlString: xml, options: [])
        let root = try #require(document.rootElement())
        #expect(root.name == "node")
        var node = Node()
        for element in root.elements(forName: "interface") {
            let name = try #require(element.attribute(forName: "name")?.stringValue)
            #expect(node.interfaces[name] == nil, "interface \(name) listed twice")
            node.interfaces[name] = element
        }
        node.children = root.elements(forName: "node").compactMap { $0.attribute(forName: "name")?.stringValue }
        return node
    }

    static func arguments(_ element: XMLElement) -> [String] {
        element.elements(forName: "arg").map { arg in
            let name = arg.attribute(forName: "name")?.stringValue ?? "-"
            let type = arg.attribute(forName: "type")?.stringValue ?? "?"
            let direction = arg.attribute(forName: "direction")?.stringValue
            return [name, type, direction].compactMap { $0 }.joined(separator: " ")
        }
    }

    static func members(_ interface: XMLElement?, _ kind: String) -> [String: [String]] {
        var out: [String: [String]] = [:]
        for element in interface?.elements(forName: kind) ?? [] {
            out[element.attribute(forName: "name")?.stringValue ?? ""] = arguments(element)
        }
        return out
    }

    @Test func introspectionDescribesTheTree() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            let client = try await t.connect()
            let interface = DBusInterface(
                "org.handoff.Test.Described",
                methods: [
                    DBusMethod("Register", inputs: "oa{sv}", outputs: "s", argumentNames: ["path", "options", "handle"]) { _ in [.string("")] },
                    DBusMethod("Release") { _ in [] },
                    DBusMethod("Unnamed", inputs: "ay") { _ in [] },
                ],
                properties: [
                    DBusProperty("Type", "peripheral"),
                    DBusProperty("Data", type: .array(.dictEntry(key: .uint16, value: .variant)), value: .dictionary(key: .uint16, value: .variant, []), access: .readwrite),
                    DBusProperty("Key", type: .string, value: .string(""), access: .write, changeSignal: .invalidates),
                    DBusProperty("Id", UInt32(1), changeSignal: .const),
                    DBusProperty("Quiet", UInt32(1), changeSignal: .false),
                ],
                signals: [DBusSignalDescription("Changed", signature: "sv", argumentNames: ["what", "value"]), DBusSignalDescription("Ping")])
            try await server.addObjectManager(at: "/org/handoff")
            _ = try await server.export("/org/handoff/adv0", interfaces: [interface])
            _ = try await server.export("/org/handoff/adv1/deep", interfaces: [DBusInterface(localInterface)])

            let node = try await Self.introspect(client, server.uniqueName, "/org/handoff/adv0")
            #expect(Set(node.interfaces.keys) == [
                "org.freedesktop.DBus.Introspectable", "org.freedesktop.DBus.Peer", "org.freedesktop.DBus.Properties",
                "org.handoff.Test.Described",
            ])
            #expect(node.children.isEmpty)
            let described = node.interfaces["org.handoff.Test.Described"]
            #expect(Self.members(described, "method") == [
                "Register": ["path o in", "options a{sv} in", "handle s out"],
                "Release": [],
                "Unnamed": ["- ay in"],
            ])
            #expect(Self.members(described, "signal") == ["Changed": ["what s", "value v"], "Ping": []])
            var properties: [String: String] = [:]
            for property in described?.elements(forName: "property") ?? [] {
                let name = property.attribute(forName: "name")?.stringValue ?? ""
                let type = property.attribute(forName: "type")?.stringValue ?? ""
                let access = property.attribute(forName: "access")?.stringValue ?? ""
                let annotation = property.elements(forName: "annotation").first
                #expect(annotation == nil || annotation?.attribute(forName: "name")?.stringValue == "org.freedesktop.DBus.Property.EmitsChangedSignal")
                properties[name] = "\(type) \(access) \(annotation?.attribute(forName: "value")?.stringValue ?? "default")"
            }
            #expect(properties == [
                "Type": "s read default", "Data": "a{qv} readwrite default", "Key": "s write invalidates",
                "Id": "u read const", "Quiet": "u read false",
            ])
            #expect(Self.members(node.interfaces["org.freedesktop.DBus.Properties"], "method") == [
                "Get": ["interface_name s in", "property_name s in", "value v out"],
                "GetAll": ["interface_name s in", "props a{sv} out"],
                "Set": ["interface_name s in", "property_name s in", "value v in"],
            ])

            // Nodes without objects list their children; the manager says so.
            let manager = try await Self.introspect(client, server.uniqueName, "/org/handoff")
            #expect(manager.children == ["adv0", "adv1"])
            #expect(manager.interfaces["org.freedesktop.DBus.ObjectManager"] != nil)
            #expect(Self.members(manager.interfaces["org.freedesktop.DBus.ObjectManager"], "method") == ["GetManagedObjects": ["objects a{oa{sa{sv}}} out"]])
            let root = try await Self.introspect(client, server.uniqueName, .root)
            #expect(root.children == ["org"])
            #expect(root.interfaces["org.freedesktop.DBus.Properties"] == nil)
            #expect(try await Self.introspect(client, server.uniqueName, "/org/handoff/adv1").children == ["deep"])
            let missing = await #expect(throws: DBusError.self) {
                _ = try await Self.introspect(client, server.uniqueName, "/nothing/here")
            }
            #expect(missing?.is(.unknownObject) == true)
        }
    }

    @Test func introspectionEscapesNames() async throws {
        try await TestBus.run { t in
            let server = try await t.connect()
            // Names cannot hold markup, but argument names are free text.
            let interface = DBusInterface(
                localInterface, methods: [DBusMethod("M", inputs: "s", argumentNames: ["<a & \"b\" 'c'>"]) { _ in [] }])
            _ = try await server.export("/x", interfaces: [interface])
            let node = try await Self.introspect(server, server.uniqueName, "/x")
            #expect(Self.members(node.interfaces[localInterface], "method") == ["M": ["<a & \"b\" 'c'> s in"]])
        }
    }
}
