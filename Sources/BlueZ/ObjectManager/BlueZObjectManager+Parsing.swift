import DBus

// Reading bluetoothd's `GetManagedObjects` and `InterfacesAdded` into the tree's shape.
extension BlueZObjectManager {
    static func parseInterfaces(_ value: DBusValue) -> Interfaces? {
        guard let entries = value.dictionaryEntries else { return nil }
        var out: Interfaces = [:]
        for (key, properties) in entries {
            guard case .string(let name) = key, let map = properties.vardict else { return nil }
            out[name] = map
        }
        return out
    }

    static func parseManagedObjects(_ value: DBusValue) -> [DBusObjectPath: Interfaces]? {
        guard let entries = value.dictionaryEntries else { return nil }
        var out: [DBusObjectPath: Interfaces] = [:]
        for (key, interfaces) in entries {
            guard case .objectPath(let path) = key, let parsed = parseInterfaces(interfaces) else { return nil }
            out[path] = parsed
        }
        return out
    }
}

extension [String: DBusValue] {
    /// Applies a `PropertiesChanged` in place and returns the result.
    mutating func apply(changed: [String: DBusValue], invalidated: [String]) -> Self {
        for (name, value) in changed { self[name] = value }
        for name in invalidated { self[name] = nil }
        return self
    }
}
