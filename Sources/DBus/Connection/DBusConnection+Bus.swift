extension DBusConnection {
    /// Flags for `requestName`, as in the D-Bus specification.
    public struct RequestNameFlags: OptionSet, Sendable {
        public let rawValue: UInt32
        public init(rawValue: UInt32) { self.rawValue = rawValue }
        /// Let another connection take the name with `replaceExisting`.
        public static let allowReplacement = RequestNameFlags(rawValue: 1)
        /// Take the name from its owner if that owner allowed replacement.
        public static let replaceExisting = RequestNameFlags(rawValue: 2)
        /// Fail instead of waiting in the queue.
        public static let doNotQueue = RequestNameFlags(rawValue: 4)
    }

    /// The bus's answer to `requestName`.
    public enum RequestNameReply: UInt32, Sendable {
        case primaryOwner = 1, inQueue = 2, exists = 3, alreadyOwner = 4
    }

    /// The bus's answer to `releaseName`.
    public enum ReleaseNameReply: UInt32, Sendable {
        case released = 1, nonExistent = 2, notOwner = 3
    }

    /// Asks the bus for a well-known name.
    @discardableResult
    public func requestName(_ name: String, flags: RequestNameFlags = [.doNotQueue]) async throws -> RequestNameReply {
        guard DBusNames.isValidBusName(name), !name.hasPrefix(":") else {
            throw DBusError(.invalidArgs, "invalid well-known name '\(name)'")
        }
        let code = try await callBus("RequestName", [.string(name), .uint32(flags.rawValue)]).decode(UInt32.self)
        guard let reply = RequestNameReply(rawValue: code) else {
            throw DBusDecodingError.invalidValue("unknown RequestName reply \(code)")
        }
        return reply
    }

    /// Gives a well-known name back to the bus.
    @discardableResult
    public func releaseName(_ name: String) async throws -> ReleaseNameReply {
        guard DBusNames.isValidBusName(name) else { throw DBusError(.invalidArgs, "invalid bus name '\(name)'") }
        let code = try await callBus("ReleaseName", [.string(name)]).decode(UInt32.self)
        guard let reply = ReleaseNameReply(rawValue: code) else {
            throw DBusDecodingError.invalidValue("unknown ReleaseName reply \(code)")
        }
        return reply
    }

    /// The unique name that owns `name` now, or nil when nobody does.
    public func nameOwner(of name: String) async throws -> String? {
        guard DBusNames.isValidBusName(name) else { throw DBusError(.invalidArgs, "invalid bus name '\(name)'") }
        do {
            return try await callBus("GetNameOwner", [.string(name)]).decode(String.self)
        } catch let error as DBusError where error.is(.nameHasNoOwner) {
            return nil
        }
    }

    /// Every name on the bus.
    public func listNames() async throws -> [String] {
        try await callBus("ListNames").decode([String].self)
    }

    /// Calls a method of the bus itself (`org.freedesktop.DBus`).
    @discardableResult
    func callBus(_ member: String, _ body: [DBusValue] = []) async throws -> DBusMessage {
        try await call(Self.busCall(member, body))
    }

    static func busCall(_ member: String, _ body: [DBusValue], noReply: Bool = false) -> DBusMessage {
        var message = DBusMessage.methodCall(
            destination: busName, path: busPath, interface: busInterface, member: member, body: body)
        message.noReplyExpected = noReply
        return message
    }
}
