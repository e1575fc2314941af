/// The objects a connection exports, and the standard interfaces it serves for them.
///
/// It answers `org.freedesktop.DBus.Properties`, `Introspectable` and
/// `ObjectManager` itself, from the stored property values, synchronously on
/// the loop thread: a peer that calls back into us while we wait for its reply
/// (as bluetoothd does during RegisterAdvertisement) is answered at once.
/// Calls to the objects' own methods run their handlers as tasks.
///
/// Loop thread only.
final class ObjectRegistry {
    static let propertiesInterface = "org.freedesktop.DBus.Properties"
    static let introspectableInterface = "org.freedesktop.DBus.Introspectable"
    static let objectManagerInterface = "org.freedesktop.DBus.ObjectManager"
    static let peerInterface = "org.freedesktop.DBus.Peer"

    final class Object {
        let path: DBusObjectPath
        var interfaces: [DBusInterface]
        /// Current property values: interface → property → value.
        var values: [String: [String: DBusValue]] = [:]

        init(path: DBusObjectPath, interfaces: [DBusInterface]) {
            self.path = path
            self.interfaces = interfaces
            for interface in interfaces {
                var map: [String: DBusValue] = [:]
                for property in interface.properties { map[property.name] = property.value }
                values[interface.name] = map
            }
        }

        func interface(_ name: String) -> DBusInterface? { interfaces.first { $0.name == name } }

        /// `{interface: {property: value}}` for the readable properties.
        func managedDescription() -> DBusValue {
            .dictionary(
                key: .string, value: .array(.dictEntry(key: .string, value: .variant)),
                interfaces.map { (.string($0.name), readableProperties(of: $0)) })
        }

        func readableProperties(of interface: DBusInterface) -> DBusValue {
            let map = values[interface.name] ?? [:]
            var readable: [String: DBusValue] = [:]
            for property in interface.properties where property.access != .write {
                readable[property.name] = map[property.name]
            }
            return .vardict(readable)
        }
    }

    private(set) var objects: [DBusObjectPath: Object] = [:]
    private(set) var managers: Set<DBusObjectPath> = []

    func removeAll() {
        objects.removeAll()
        managers.removeAll()
    }

    // MARK: Changing the tree

    func export(_ path: DBusObjectPath, interfaces: [DBusInterface], core: ConnectionCore) throws(DBusError) {
        guard objects[path] == nil else {
            throw DBusError(.failed, "an object is already exported at \(path)")
        }
        try Self.check(interfaces)
        let object = Object(path: path, interfaces: interfaces)
        objects[path] = object
        if let manager = manager(of: path) {
            core.emit(
                .signal(
                    path: manager, interface: Self.objectManagerInterface, member: "InterfacesAdded",
                    body: [.objectPath(path), object.managedDescription()]))
        }
    }

    func unexport(_ path: DBusObjectPath, core: ConnectionCore) {
        guard let object = objects.removeValue(forKey: path) else { return }
        if let manager = manager(of: path) {
            core.emit(
                .signal(
                    path: manager, interface: Self.objectManagerInterface, member: "InterfacesRemoved",
                    body: [.objectPath(path), .strings(object.interfaces.map(\.name))]))
        }
    }

    func addManager(_ path: DBusObjectPath) {
        managers.insert(path)
    }

    func removeManager(_ path: DBusObjectPath) {
        managers.remove(path)
    }

    /// The nearest object manager strictly above `path`.
    private func manager(of path: DBusObjectPath) -> DBusObjectPath? {
        managers.filter { path.isDescendant(of: $0) }.max { $0.rawValue.count < $1.rawValue.count }
    }

    private static func check(_ interfaces: [DBusInterface]) throws(DBusError) {
        var names = Set<String>()
        for interface in interfaces {
            guard DBusNames.isValidInterface(interface.name) else {
                throw DBusError(.invalidArgs, "invalid interface name '\(interface.name)'")
            }
            guard names.insert(interface.name).inserted else {
                throw DBusError(.invalidArgs, "interface \(interface.name) listed twice")
            }
            for method in interface.methods where !DBusNames.isValidMember(method.name) {
                throw DBusError(.invalidArgs, "invalid method name '\(method.name)'")
            }
            for property in interface.properties {
                guard DBusNames.isValidMember(property.name) else {
                    throw DBusError(.invalidArgs, "invalid property name '\(property.name)'")
                }
                guard property.value.type == property.type else {
                    throw DBusError(
                        .invalidArgs,
                        "property \(property.name) is declared '\(property.type)' but holds '\(property.value.type)'")
                }
                try property.value.validate()
            }
        }
    }

    // MARK: Properties set by the owner

    func setProperties(
        _ path: DBusObjectPath, interface name: String, _ changes: [String: DBusValue], announce: Bool = true,
        core: ConnectionCore
    ) throws(DBusError) {
        guard let object = objects[path] else { throw DBusError(.unknownObject, "no object at \(path)") }
        guard let interface = object.interface(name) else {
            throw DBusError(.unknownInterface, "\(path) has no interface \(name)")
        }
        var changed: [String: DBusValue] = [:]
        var invalidated: [String] = []
        for (propertyName, value) in changes {
            guard let property = interface.properties.first(where: { $0.name == propertyName }) else {
                throw DBusError(.unknownProperty, "\(name) has no property \(propertyName)")
            }
            guard value.type == property.type else {
                throw DBusError(
                    .invalidArgs, "property \(propertyName) has type '\(property.type)', not '\(value.type)'")
            }
            try value.validate()
        }
        for (propertyName, value) in changes {
            let property = interface.properties.first { $0.name == propertyName }!
            let old = object.values[name]?[propertyName]
            object.values[name, default: [:]][propertyName] = value
            guard old != value else { continue }
            switch property.changeSignal {
            case .true: changed[propertyName] = value
            case .invalidates: invalidated.append(propertyName)
            case .const, .false: break
            }
        }
        guard announce else { return }
        emitPropertiesChanged(path, interface: name, changed: changed, invalidated: invalidated, core: core)
    }

    func property(_ path: DBusObjectPath, interface: String, name: String) -> DBusValue? {
        objects[path]?.values[interface]?[name]
    }

    private func emitPropertiesChanged(
        _ path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String],
        core: ConnectionCore
    ) {
        guard !changed.isEmpty || !invalidated.isEmpty else { return }
        core.emit(
            .signal(
                path: path, interface: Self.propertiesInterface, member: "PropertiesChanged",
                body: [.string(interface), .vardict(changed), .strings(invalidated.sorted())]))
    }

    // MARK: Incoming method calls

    func handle(_ call: DBusMessage, core: ConnectionCore) {
        guard let path = call.path, let member = call.member else { return }
        switch call.interface {
        case Self.introspectableInterface?:
            reply(call, core) { () throws(DBusError) in try introspect(call, path: path) }
            return
        case Self.propertiesInterface?:
            reply(call, core) { () throws(DBusError) in try properties(call, path: path, core: core) }
            return
        case Self.objectManagerInterface? where managers.contains(path):
            reply(call, core) { () throws(DBusError) in try managedObjects(call, path: path) }
            return
        case nil where member == "Introspect" && objects[path]?.interfaces.contains(where: { i in
            i.methods.contains { $0.name == "Introspect" }
        }) != true:
            reply(call, core) { () throws(DBusError) in try introspect(call, path: path) }
            return
        default:
            break
        }
        guard let object = objects[path] else {
            reply(call, core) { () throws(DBusError) in throw DBusError(.unknownObject, "no object at \(path)") }
            return
        }
        let candidates = call.interface.map { name in object.interfaces.filter { $0.name == name } } ?? object.interfaces
        guard !candidates.isEmpty else {
            reply(call, core) { () throws(DBusError) in
                throw DBusError(.unknownInterface, "\(path) has no interface \(call.interface ?? "")")
            }
            return
        }
        guard let method = candidates.lazy.compactMap({ $0.methods.first { $0.name == member } }).first else {
            reply(call, core) { () throws(DBusError) in
                throw DBusError(.unknownMethod, "no method \(member) on \(call.interface ?? path.rawValue)")
            }
            return
        }
        guard call.signature == method.inputs else {
            reply(call, core) { () throws(DBusError) in
                throw DBusError(
                    .invalidArgs, "\(member) takes '\(method.inputs)', not '\(call.signature)'")
            }
            return
        }
        let loop = core.loop
        Task {
            var response: DBusMessage
            do {
                let result = try await method.handler(call)
                let produced = DBusSignature(types: result.map(\.type))
                if produced == method.outputs {
                    response = call.makeReply(result)
                } else {
                    response = call.makeErrorReply(
                        DBusError(.failed, "\(member) produced '\(produced)' instead of '\(method.outputs)'"))
                }
            } catch let error as DBusError {
                response = call.makeErrorReply(error)
            } catch {
                response = call.makeErrorReply(DBusError(.failed, String(describing: error)))
            }
            guard !call.noReplyExpected else { return }
            let encoded: LibDBusMessage
            do { encoded = try MessageEncoder.encode(response) } catch let error as DBusError {
                guard let fallback = try? MessageEncoder.encode(call.makeErrorReply(error)) else { return }
                encoded = fallback
            }
            loop.enqueue { [unowned core] in _ = try? core.send(encoded) }
        }
    }

    /// Sends the result of `body` (or its error) as the reply to `call`.
    private func reply(_ call: DBusMessage, _ core: ConnectionCore, _ body: () throws(DBusError) -> [DBusValue]) {
        guard !call.noReplyExpected else {
            _ = try? body()
            return
        }
        do { core.emit(call.makeReply(try body())) } catch { core.emit(call.makeErrorReply(error)) }
    }

    private func managedObjects(_ call: DBusMessage, path: DBusObjectPath) throws(DBusError) -> [DBusValue] {
        guard call.member == "GetManagedObjects" else {
            throw DBusError(.unknownMethod, "ObjectManager has no method \(call.member ?? "")")
        }
        guard call.body.isEmpty else { throw DBusError(.invalidArgs, "GetManagedObjects takes no arguments") }
        let below = objects.values.filter { $0.path.isDescendant(of: path) }.sorted { $0.path < $1.path }
        return [
            .dictionary(
                key: .objectPath, value: .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant)))),
                below.map { (.objectPath($0.path), $0.managedDescription()) })
        ]
    }

    private func properties(_ call: DBusMessage, path: DBusObjectPath, core: ConnectionCore) throws(DBusError)
        -> [DBusValue]
    {
        guard let object = objects[path] else { throw DBusError(.unknownObject, "no object at \(path)") }
        func lookUp(_ interfaceName: String) throws(DBusError) -> DBusInterface {
            guard let interface = object.interface(interfaceName) else {
                throw DBusError(.unknownInterface, "\(path) has no interface \(interfaceName)")
            }
            return interface
        }
        switch (call.member, call.body.first, call.body.count > 1 ? call.body[1] : nil) {
        case ("Get", .string(let interfaceName)?, .string(let name)?) where call.body.count == 2:
            let interface = try lookUp(interfaceName)
            guard let property = interface.properties.first(where: { $0.name == name }) else {
                throw DBusError(.unknownProperty, "\(interfaceName) has no property \(name)")
            }
            guard property.access != .write else {
                throw DBusError(.accessDenied, "property \(name) is write-only")
            }
            return [.variant(object.values[interfaceName]?[name] ?? property.value)]
        case ("GetAll", .string(let interfaceName)?, nil):
            return [object.readableProperties(of: try lookUp(interfaceName))]
        case ("Set", .string(let interfaceName)?, .string(let name)?) where call.body.count == 3:
            guard case .variant(let value) = call.body[2] else {
                throw DBusError(.invalidArgs, "Set takes (ssv)")
            }
            let interface = try lookUp(interfaceName)
            guard let property = interface.properties.first(where: { $0.name == name }) else {
                throw DBusError(.unknownProperty, "\(interfaceName) has no property \(name)")
            }
            guard property.access != .read else {
                throw DBusError(.propertyReadOnly, "property \(name) is read-only")
            }
            guard value.type == property.type else {
                throw DBusError(.invalidArgs, "property \(name) has type '\(property.type)', not '\(value.type)'")
            }
            if let validate = property.validate {
                do { try validate(value) } catch let error as DBusError { throw error } catch {
                    throw DBusError(.invalidArgs, String(describing: error))
                }
            }
            try setProperties(path, interface: interfaceName, [name: value], core: core)
            return []
        case ("Get", _, _), ("GetAll", _, _), ("Set", _, _):
            throw DBusError(.invalidArgs, "wrong arguments for Properties.\(call.member!): '\(call.signature)'")
        default:
            throw DBusError(.unknownMethod, "Properties has no method \(call.member ?? "")")
        }
    }

    private func introspect(_ call: DBusMessage, path: DBusObjectPath) throws(DBusError) -> [DBusValue] {
        guard call.member == "Introspect" else {
            throw DBusError(.unknownMethod, "Introspectable has no method \(call.member ?? "")")
        }
        let children = childNames(of: path)
        let object = objects[path]
        guard object != nil || !children.isEmpty || path == .root else {
            throw DBusError(.unknownObject, "no object at \(path)")
        }
        return [
            .string(
                Introspection.xml(
                    interfaces: object?.interfaces ?? [], isManager: managers.contains(path), children: children))
        ]
    }

    /// The names of the nodes directly below `path` that lead to exported objects.
    private func childNames(of path: DBusObjectPath) -> [String] {
        var names = Set<String>()
        let depth = path.elements.count
        for other in Array(objects.keys) + Array(managers) where other.isDescendant(of: path) {
            names.insert(String(other.elements[depth]))
        }
        return names.sorted()
    }
}
