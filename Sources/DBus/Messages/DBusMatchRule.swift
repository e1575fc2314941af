/// A D-Bus match rule: which signals a subscription wants.
///
/// The bus uses the rule's text to route messages to this connection, and the
/// connection uses `matches` to hand each message to the subscriptions that
/// asked for it. A rule naming a well-known sender (such as `org.bluez`) is
/// matched locally against that name's current unique owner.
public struct DBusMatchRule: Sendable, Hashable {
    public var type: DBusMessage.Kind? = .signal
    public var sender: String?
    public var interface: String?
    public var member: String?
    public var path: DBusObjectPath?
    /// Matches this path and every path below it.
    public var pathNamespace: DBusObjectPath?
    public var destination: String?
    /// String arguments to match exactly, by position (0–63).
    public var arguments: [Int: String] = [:]
    /// Object-path arguments matched as path prefixes (`argNpath`), by position.
    public var argumentPaths: [Int: String] = [:]

    public init(
        type: DBusMessage.Kind? = .signal, sender: String? = nil, interface: String? = nil, member: String? = nil,
        path: DBusObjectPath? = nil, pathNamespace: DBusObjectPath? = nil, destination: String? = nil,
        arguments: [Int: String] = [:], argumentPaths: [Int: String] = [:]
    ) {
        self.type = type
        self.sender = sender
        self.interface = interface
        self.member = member
        self.path = path
        self.pathNamespace = pathNamespace
        self.destination = destination
        self.arguments = arguments
        self.argumentPaths = argumentPaths
    }

    /// The rule as the bus's AddMatch expects it, for example
    /// `type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties'`.
    public var text: String {
        var parts: [String] = []
        func add(_ key: String, _ value: String?) {
            guard let value else { return }
            // Each ' becomes '\'' (the bus reads the rule byte by byte).
            var quoted = ""
            for scalar in value.unicodeScalars {
                if scalar == "'" { quoted += "'\\''" } else { quoted.unicodeScalars.append(scalar) }
            }
            parts.append("\(key)='\(quoted)'")
        }
        if let type {
            let name: String =
                switch type {
                case .signal: "signal"
                case .methodCall: "method_call"
                case .methodReturn: "method_return"
                case .error: "error"
                }
            add("type", name)
        }
        add("sender", sender)
        add("interface", interface)
        add("member", member)
        add("path", path?.rawValue)
        add("path_namespace", pathNamespace?.rawValue)
        add("destination", destination)
        for (index, value) in arguments.sorted(by: { $0.key < $1.key }) { add("arg\(index)", value) }
        for (index, value) in argumentPaths.sorted(by: { $0.key < $1.key }) { add("arg\(index)path", value) }
        return parts.joined(separator: ",")
    }

    /// Checks the rule's fields before they reach the bus.
    /// - Throws: `DBusError.matchRuleInvalid`.
    public func validate() throws(DBusError) {
        func check(_ ok: Bool, _ what: String) throws(DBusError) {
            if !ok { throw DBusError(.matchRuleInvalid, what) }
        }
        if let sender { try check(DBusNames.isValidBusName(sender), "invalid sender '\(sender)'") }
        if let interface { try check(DBusNames.isValidInterface(interface), "invalid interface '\(interface)'") }
        if let member { try check(DBusNames.isValidMember(member), "invalid member '\(member)'") }
        if let destination { try check(DBusNames.isValidBusName(destination), "invalid destination '\(destination)'") }
        try check(path == nil || pathNamespace == nil, "path and path_namespace cannot both be set")
        for index in arguments.keys { try check((0..<64).contains(index), "argument index \(index) out of range") }
        for index in argumentPaths.keys { try check((0..<64).contains(index), "argument index \(index) out of range") }
        for value in arguments.values { try check(DBusNames.isValidString(value), "argument contains NUL") }
    }

    /// True when the rule looks at header fields only (no arguments).
    var isHeaderOnly: Bool { arguments.isEmpty && argumentPaths.isEmpty }

    /// True when `message` satisfies every field of the rule.
    /// - Parameter ownerOf: the current unique owner of a well-known name, if known.
    public func matches(_ message: DBusMessage, ownerOf: (String) -> String? = { _ in nil }) -> Bool {
        if let type, message.kind != type { return false }
        if let sender, !senderMatches(sender, message.sender, ownerOf: ownerOf) { return false }
        if let interface, message.interface != interface { return false }
        if let member, message.member != member { return false }
        if let path, message.path != path { return false }
        if let pathNamespace {
            guard let messagePath = message.path,
                messagePath == pathNamespace || messagePath.isDescendant(of: pathNamespace)
            else { return false }
        }
        if let destination, message.destination != destination { return false }
        for (index, value) in arguments {
            guard index < message.body.count, case .string(let actual) = message.body[index], actual == value
            else { return false }
        }
        for (index, value) in argumentPaths {
            guard index < message.body.count, let actual = message.body[index].string,
                Self.pathArgumentMatches(actual, value)
            else { return false }
        }
        return true
    }

    private func senderMatches(_ wanted: String, _ actual: String?, ownerOf: (String) -> String?) -> Bool {
        guard let actual else { return false }
        if wanted == actual { return true }
        if wanted.hasPrefix(":") || wanted == DBusConnection.busName { return false }
        return ownerOf(wanted) == actual
    }

    /// The `argNpath` rule: equal, or one is a prefix of the other ending in `/`.
    static func pathArgumentMatches(_ actual: String, _ wanted: String) -> Bool {
        if actual == wanted { return true }
        if wanted.hasSuffix("/") && actual.hasPrefix(wanted) { return true }
        if actual.hasSuffix("/") && wanted.hasPrefix(actual) { return true }
        return false
    }
}
