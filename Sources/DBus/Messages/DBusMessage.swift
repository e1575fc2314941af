/// A D-Bus message: its header fields and its decoded body.
///
/// Received messages are decoded completely on arrival, so a `DBusMessage`
/// is a plain value that can cross tasks and threads.
public struct DBusMessage: Sendable {
    /// The four kinds of D-Bus message.
    public enum Kind: Sendable, Hashable {
        case methodCall, methodReturn, error, signal
    }

    public var kind: Kind
    /// The serial the sender gave this message (0 until sent).
    public var serial: UInt32 = 0
    /// For replies and errors: the serial of the call answered.
    public var replySerial: UInt32?
    public var path: DBusObjectPath?
    public var interface: String?
    public var member: String?
    /// For errors: the error name.
    public var errorName: String?
    public var destination: String?
    /// The unique name of the sender, filled in by the bus.
    public var sender: String?
    /// The arguments.
    public var body: [DBusValue]
    /// For method calls: the caller does not want a reply.
    public var noReplyExpected = false
    /// For method calls: whether the bus may start a service to deliver it.
    public var autoStart = true

    public init(kind: Kind, body: [DBusValue] = []) {
        self.kind = kind
        self.body = body
    }

    /// The signature of the body.
    public var signature: DBusSignature { DBusSignature(types: body.map(\.type)) }

    /// A method call.
    public static func methodCall(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, body: [DBusValue] = []
    ) -> DBusMessage {
        var m = DBusMessage(kind: .methodCall, body: body)
        m.destination = destination
        m.path = path
        m.interface = interface
        m.member = member
        return m
    }

    /// A signal.
    public static func signal(path: DBusObjectPath, interface: String, member: String, body: [DBusValue] = [])
        -> DBusMessage
    {
        var m = DBusMessage(kind: .signal, body: body)
        m.path = path
        m.interface = interface
        m.member = member
        return m
    }

    /// The successful reply to this call.
    public func makeReply(_ body: [DBusValue] = []) -> DBusMessage {
        var m = DBusMessage(kind: .methodReturn, body: body)
        m.replySerial = serial
        m.destination = sender
        return m
    }

    /// The error reply to this call.
    public func makeErrorReply(_ error: DBusError) -> DBusMessage {
        var m = DBusMessage(kind: .error, body: error.message.isEmpty ? [] : [.string(error.message)])
        m.replySerial = serial
        m.destination = sender
        m.errorName = DBusNames.isValidErrorName(error.name) ? error.name : DBusError.Name.failed.rawValue
        return m
    }

    /// For an error message: the error it carries.
    public var error: DBusError? {
        guard kind == .error else { return nil }
        let text: String = if case .string(let s)? = body.first { s } else { "" }
        return DBusError(name: errorName ?? DBusError.Name.failed.rawValue, message: text)
    }

    /// Checks that the header fields this kind needs are present and valid.
    /// - Throws: `DBusError.invalidArgs` naming the bad field.
    public func validate() throws(DBusError) {
        func check(_ ok: Bool, _ what: String) throws(DBusError) {
            if !ok { throw DBusError(.invalidArgs, what) }
        }
        if let interface { try check(DBusNames.isValidInterface(interface), "invalid interface name '\(interface)'") }
        if let member { try check(DBusNames.isValidMember(member), "invalid member name '\(member)'") }
        if let destination { try check(DBusNames.isValidBusName(destination), "invalid bus name '\(destination)'") }
        if let errorName { try check(DBusNames.isValidErrorName(errorName), "invalid error name '\(errorName)'") }
        switch kind {
        case .methodCall:
            try check(path != nil && member != nil, "a method call needs a path and a member")
        case .signal:
            try check(path != nil && interface != nil && member != nil, "a signal needs a path, an interface and a member")
        case .methodReturn:
            try check(replySerial != nil, "a reply needs a reply serial")
        case .error:
            try check(replySerial != nil && errorName != nil, "an error needs a reply serial and an error name")
        }
        for value in body { try value.validate() }
        // The body's signature travels in a header field of type 'g': 255 bytes at
        // most. libdbus does not check, and the message never arrives.
        let length = signature.rawValue.utf8.count
        try check(
            length <= DBusSignature.maximumLength,
            "the arguments' signature is \(length) bytes long; the maximum is \(DBusSignature.maximumLength)")
    }
}

extension DBusMessage {
    /// The body converted to the given Swift types, after checking its signature.
    ///
    ///     let (name, flags) = try reply.decode(String.self, UInt32.self)
    ///
    /// - Throws: `DBusDecodingError.signatureMismatch` when the body has another signature.
    public func decode<T: DBusCodable>(_ type: T.Type) throws(DBusDecodingError) -> T {
        let expected = T.dbusType.signature
        guard body.count == 1, body[0].type == T.dbusType else {
            throw .signatureMismatch(expected: expected, actual: signature.rawValue)
        }
        return try T(dbusValue: body[0])
    }

    /// The body converted to two Swift types; see `decode(_:)`.
    ///
    /// Fixed arities rather than a parameter pack: swiftc 6.3.1 crashes in its
    /// cross-module optimisation pass on a pack here, and release builds use
    /// that pass (see the Makefile's INSTALL_BUILD_FLAGS).
    public func decode<A: DBusCodable, B: DBusCodable>(_ a: A.Type, _ b: B.Type) throws(DBusDecodingError) -> (A, B) {
        try checkSignature([A.dbusType, B.dbusType])
        return (try A(dbusValue: body[0]), try B(dbusValue: body[1]))
    }

    /// The body converted to three Swift types; see `decode(_:)`.
    public func decode<A: DBusCodable, B: DBusCodable, C: DBusCodable>(_ a: A.Type, _ b: B.Type, _ c: C.Type)
        throws(DBusDecodingError) -> (A, B, C)
    {
        try checkSignature([A.dbusType, B.dbusType, C.dbusType])
        return (try A(dbusValue: body[0]), try B(dbusValue: body[1]), try C(dbusValue: body[2]))
    }

    /// The body converted to four Swift types; see `decode(_:)`.
    public func decode<A: DBusCodable, B: DBusCodable, C: DBusCodable, D: DBusCodable>(
        _ a: A.Type, _ b: B.Type, _ c: C.Type, _ d: D.Type
    ) throws(DBusDecodingError) -> (A, B, C, D) {
        try checkSignature([A.dbusType, B.dbusType, C.dbusType, D.dbusType])
        return (
            try A(dbusValue: body[0]), try B(dbusValue: body[1]), try C(dbusValue: body[2]),
            try D(dbusValue: body[3])
        )
    }

    private func checkSignature(_ types: [DBusType]) throws(DBusDecodingError) {
        var expected = ""
        for type in types { type.appendSignature(to: &expected) }
        let actual = signature.rawValue
        guard expected == actual else { throw .signatureMismatch(expected: expected, actual: actual) }
    }
}

extension DBusMessage: CustomStringConvertible {
    public var description: String {
        var parts = ["\(kind)"]
        if let sender { parts.append("sender=\(sender)") }
        if let destination { parts.append("destination=\(destination)") }
        if let path { parts.append("path=\(path)") }
        if let interface { parts.append("interface=\(interface)") }
        if let member { parts.append("member=\(member)") }
        if let errorName { parts.append("error=\(errorName)") }
        parts.append("signature=\(signature)")
        return parts.joined(separator: " ")
    }
}
