#if canImport(Glibc)
import Glibc
#endif
import DBus
import Testing

/// `DBusValue` checks and `DBusCodable` conversions, without a bus.
@Suite struct ValueTests {
    // MARK: validate

    @Test func validValuesPass() throws {
        for value in Samples.all { try value.validate() }
        try DBusValue.array(element: .array(.dictEntry(key: .string, value: .variant)), [.vardict([:])]).validate()
    }

    static func nested(_ depth: Int) -> DBusValue {
        var value = DBusValue.int32(1)
        for _ in 0..<depth { value = .variant(value) }
        return value
    }

    @Test func nestingLimit() throws {
        try Self.nested(DBusValue.maximumNesting).validate()
        let error = #expect(throws: DBusError.self) { try Self.nested(DBusValue.maximumNesting + 1).validate() }
        #expect(error?.is(.invalidArgs) == true)
    }

    @Test(arguments: [
        ("element of another type", DBusValue.array(element: .int32, [.int32(1), .uint32(2)])),
        ("non-basic dict key", .array(element: .dictEntry(key: .variant, value: .string), [])),
        ("non-basic dict key in entry", .array(element: .dictEntry(key: .array(.byte), value: .string), [.dictEntry(.bytes([1]), .string("x"))])),
        ("NUL in a string", .string("a\0b")),
        ("NUL in a nested string", .vardict(["k": .string("a\0b")])),
        ("NUL in a dict key", .dictionary(key: .string, value: .int32, [(.string("\0"), .int32(1))])),
        ("empty struct", .structure([])),
        ("dict entry as struct field", .structure([.dictEntry(.string("k"), .int32(1))])),
        ("variant holding a dict entry", .variant(.dictEntry(.string("k"), .int32(1)))),
        ("dict entry outside an array", .dictEntry(.string("k"), .int32(1))),
        ("array of bare dict entries inside a struct type", .array(element: .structure([.dictEntry(key: .string, value: .string)]), [])),
        ("array type nested too deep", .array(element: ValueTests.deepArrayType(32), [])),
        ("variant of a struct nested too deep", .variant(ValueTests.deepStruct(33))),
        ("variant of a type longer than 255", .variant(.structure(Array(repeating: .int32(1), count: 300)))),
    ] as [(String, DBusValue)])
    func invalidValuesAreRejected(_ what: String, _ value: DBusValue) {
        let error = #expect(throws: DBusError.self, "\(what)") { try value.validate() }
        #expect(error?.is(.invalidArgs) == true, "\(what)")
    }

    static func deepArrayType(_ depth: Int) -> DBusType {
        var type = DBusType.byte
        for _ in 0..<depth { type = .array(type) }
        return type
    }

    static func deepStruct(_ depth: Int) -> DBusValue {
        var value = DBusValue.int32(1)
        for _ in 0..<depth { value = .structure([value]) }
        return value
    }

    @Test func typesOfValues() {
        #expect(DBusValue.vardict([:]).type == .array(.dictEntry(key: .string, value: .variant)))
        #expect(DBusValue.structure([.byte(1), .strings([])]).type == .structure([.byte, .array(.string)]))
        #expect(DBusValue.variant(.int32(1)).type == .variant)
        #expect(DBusValue.bytes([1, 2]).type == .array(.byte))
        #expect(DBusValue.dictEntry(.string("k"), .variant(.int32(1))).type == .dictEntry(key: .string, value: .variant))
        #expect(DBusMessage(kind: .signal, body: [.int32(1), .vardict([:])]).signature == "ia{sv}")
    }

    @Test func readingValues() {
        let dict = DBusValue.vardict(["b": .int32(2), "a": .string("x")])
        // vardict sorts keys, so the encoding is deterministic.
        #expect(dict.dictionaryEntries?.map(\.key) == [.string("a"), .string("b")])
        #expect(dict.vardict == ["a": .string("x"), "b": .int32(2)])
        #expect(DBusValue.variant(.variant(.string("s"))).unwrapped == .string("s"))
        #expect(DBusValue.variant(.objectPath("/p")).string == "/p")
        #expect(DBusValue.signature("as").string == "as")
        #expect(DBusValue.int32(1).string == nil)
        #expect(DBusValue.bytes([1, 2]).bytes == [1, 2])
        #expect(DBusValue.array(element: .int32, []).bytes == nil)
        #expect(DBusValue.strings(["a"]).arrayElements == [.string("a")])
        #expect(DBusValue.uint64(.max).integer == nil)
        #expect(DBusValue.uint64(5).integer == 5)
        #expect(DBusValue.variant(.int16(-3)).integer == -3)
        #expect(DBusValue.variant(.boolean(true)).boolean == true)
        #expect(DBusValue.string("x").boolean == nil)
        #expect(DBusValue.strings(["a"]).vardict == nil)
        #expect(DBusValue.dictionary(key: .int32, value: .variant, [(.int32(1), .variant(.int32(1)))]).vardict == nil)
        let literal: DBusValue = "text"
        #expect(literal == .string("text"))
        let flag: DBusValue = true
        #expect(flag == .boolean(true))
    }

    // MARK: DBusCodable

    static func roundTrip<T: DBusCodable & Equatable>(_ value: T, _ type: DBusType) throws {
        #expect(T.dbusType == type)
        #expect(value.dbusValue.type == type)
        #expect(try T(dbusValue: value.dbusValue) == value)
    }

    @Test func basicConversions() throws {
        try Self.roundTrip(UInt8(200), .byte)
        try Self.roundTrip(true, .boolean)
        try Self.roundTrip(Int16(-2), .int16)
        try Self.roundTrip(UInt16(2), .uint16)
        try Self.roundTrip(Int32(-3), .int32)
        try Self.roundTrip(UInt32(3), .uint32)
        try Self.roundTrip(Int64.min, .int64)
        try Self.roundTrip(UInt64.max, .uint64)
        try Self.roundTrip(2.5, .double)
        try Self.roundTrip("s", .string)
        try Self.roundTrip(DBusObjectPath("/o"), .objectPath)
        try Self.roundTrip(DBusSignature("a{sv}"), .signature)
        try Self.roundTrip([UInt8](), .array(.byte))
        try Self.roundTrip(["a", "b"], .array(.string))
        try Self.roundTrip([[Int32(1)], []], .array(.array(.int32)))
        try Self.roundTrip([UInt16(76): [UInt8(1)]], .array(.dictEntry(key: .uint16, value: .array(.byte))))
        try Self.roundTrip(
            [DBusObjectPath("/a"): ["org.bluez.Device1": ["RSSI": DBusValue.int16(-60)]]],
            .array(.dictEntry(key: .objectPath, value: .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant)))))))
    }

    @Test func anyValueTravelsAsAVariant() throws {
        let value = DBusValue.int32(1)
        #expect(DBusValue.dbusType == .variant)
        #expect(value.dbusValue == .variant(.int32(1)))
        #expect(try DBusValue(dbusValue: .variant(.int32(1))) == .int32(1))
        #expect(throws: DBusDecodingError.typeMismatch(expected: "v", actual: "i", context: "")) {
            try DBusValue(dbusValue: .int32(1))
        }
        let properties: [String: DBusValue] = ["Powered": .boolean(true)]
        #expect(properties.dbusValue == .vardict(["Powered": .boolean(true)]))
    }

    @Test func mismatchesAreTypedErrors() {
        #expect(throws: DBusDecodingError.typeMismatch(expected: "u", actual: "i", context: "")) {
            try UInt32(dbusValue: .int32(1))
        }
        #expect(throws: DBusDecodingError.typeMismatch(expected: "s", actual: "o", context: "")) {
            try String(dbusValue: .objectPath("/"))
        }
        #expect(throws: DBusDecodingError.typeMismatch(expected: "b", actual: "v", context: "")) {
            try Bool(dbusValue: .variant(.boolean(true)))
        }
        #expect(throws: DBusDecodingError.typeMismatch(expected: "as", actual: "ai", context: "")) {
            try [String](dbusValue: .array(element: .int32, []))
        }
        #expect(throws: DBusDecodingError.typeMismatch(expected: "a{sv}", actual: "a{ss}", context: "")) {
            try [String: DBusValue](dbusValue: .dictionary(key: .string, value: .string, []))
        }
        #expect(throws: DBusDecodingError.typeMismatch(expected: "ay", actual: "s", context: "")) {
            try [UInt8](dbusValue: .string("x"))
        }
        #expect(throws: DBusDecodingError.typeMismatch(expected: "h", actual: "i", context: "")) {
            try DBusUnixFD(dbusValue: .int32(3))
        }
        for sample in Samples.all {
            // Whatever the value, asking for the wrong type throws and never traps.
            #expect(throws: DBusDecodingError.self) { try [DBusObjectPath: [String]](dbusValue: sample) }
            #expect(throws: DBusDecodingError.self) { try Int16(dbusValue: .variant(sample)) }
        }
    }

    @Test func propertyMapAccess() throws {
        let map: [String: DBusValue] = ["Name": .string("hci0"), "Powered": .boolean(true), "UUIDs": .strings(["180a"])]
        #expect(try map.require("Name", as: String.self) == "hci0")
        #expect(try map.require("UUIDs", as: [String].self) == ["180a"])
        #expect(try map.optional("Powered", as: Bool.self) == true)
        #expect(try map.optional("Missing", as: Bool.self) == nil)
        #expect(throws: DBusDecodingError.missingKey("Missing")) { try map.require("Missing", as: String.self) }
        #expect(throws: DBusDecodingError.typeMismatch(expected: "u", actual: "s", context: "key 'Name'")) {
            try map.require("Name", as: UInt32.self)
        }
        #expect(throws: DBusDecodingError.typeMismatch(expected: "s", actual: "b", context: "key 'Powered'")) {
            try map.optional("Powered", as: String.self)
        }
    }

    @Test func decodingMessageBodies() throws {
        let message = DBusMessage(kind: .methodReturn, body: [.string("hci0"), .uint32(7), .vardict(["A": .int32(1)])])
        let (name, count, properties) = try message.decode(String.self, UInt32.self, [String: DBusValue].self)
        #expect(name == "hci0" && count == 7 && properties == ["A": .int32(1)])
        #expect(throws: DBusDecodingError.signatureMismatch(expected: "s", actual: "sua{sv}")) {
            try message.decode(String.self)
        }
        #expect(throws: DBusDecodingError.signatureMismatch(expected: "su", actual: "sua{sv}")) {
            try message.decode(String.self, UInt32.self)
        }
        #expect(throws: DBusDecodingError.signatureMismatch(expected: "sia{sv}", actual: "sua{sv}")) {
            try message.decode(String.self, Int32.self, [String: DBusValue].self)
        }
        #expect(throws: DBusDecodingError.signatureMismatch(expected: "s", actual: "")) {
            try DBusMessage(kind: .methodReturn).decode(String.self)
        }
        #expect(try DBusMessage(kind: .methodReturn, body: [.int32(4)]).decode(Int32.self) == 4)
    }

    @Test func decodingErrorsDescribeThemselves() {
        #expect(DBusDecodingError.signatureMismatch(expected: "s", actual: "i").description.contains("'s'"))
        #expect(DBusDecodingError.missingKey("Name").description.contains("Name"))
        #expect(DBusDecodingError.typeMismatch(expected: "u", actual: "s", context: "key 'A'").description.contains("key 'A'"))
    }

    @Test func fileDescriptorsAreOwnedAndComparedByOpenFile() throws {
        let fd = try pipeHolding("x")
        let copy = try DBusUnixFD(duplicating: fd.fileDescriptor)
        #expect(copy.fileDescriptor != fd.fileDescriptor)
        #expect(copy == fd)
        #expect(copy.hashValue == fd.hashValue)
        let converted = try DBusUnixFD(dbusValue: .unixFD(fd))
        #expect(converted.fileDescriptor != fd.fileDescriptor)
        #expect(converted == fd)
        let other = try pipeHolding("y")
        #expect(other != fd)
        #expect(throws: DBusError.self) { try DBusUnixFD(duplicating: -1) }
        // Dropping the last reference closes the descriptor.
        var number: Int32 = -1
        do {
            let scoped = try DBusUnixFD(duplicating: fd.fileDescriptor)
            number = scoped.fileDescriptor
            withExtendedLifetime(scoped) { #expect(fcntl(number, F_GETFD) >= 0) }
        }
        #expect(fcntl(number, F_GETFD) == -1)
    }

    // MARK: Messages

    @Test func messageValidationNamesTheBadField() {
        func invalid(_ message: DBusMessage) -> Bool {
            do {
                try message.validate()
                return false
            } catch { return error.is(.invalidArgs) }
        }
        var call = DBusMessage.methodCall(destination: "org.bluez", path: "/", interface: "a.b", member: "M")
        #expect(!invalid(call))
        call.member = "1M"
        #expect(invalid(call))
        call.member = nil
        #expect(invalid(call))
        call = .methodCall(destination: "org..bluez", path: "/", interface: nil, member: "M")
        #expect(invalid(call))
        call = .methodCall(destination: nil, path: "/", interface: "nodots", member: "M")
        #expect(invalid(call))
        call = .methodCall(destination: nil, path: "/", interface: nil, member: "M", body: [.string("\0")])
        #expect(invalid(call))
        var signal = DBusMessage(kind: .signal)
        signal.path = "/"
        signal.member = "S"
        #expect(invalid(signal))
        signal.interface = "a.b"
        #expect(!invalid(signal))
        var reply = DBusMessage(kind: .methodReturn)
        #expect(invalid(reply))
        reply.replySerial = 3
        #expect(!invalid(reply))
        var error = DBusMessage(kind: .error)
        error.replySerial = 3
        #expect(invalid(error))
        error.errorName = "not valid"
        #expect(invalid(error))
        error.errorName = "org.example.Error.Bad"
        #expect(!invalid(error))
    }

    @Test func repliesAndErrors() {
        var call = DBusMessage.methodCall(destination: ":1.1", path: "/", interface: "a.b", member: "M")
        call.serial = 42
        call.sender = ":1.7"
        let reply = call.makeReply([.int32(1)])
        #expect(reply.kind == .methodReturn && reply.replySerial == 42 && reply.destination == ":1.7")
        #expect(reply.body == [.int32(1)])
        let error = call.makeErrorReply(DBusError(name: "org.example.Error.Bad", message: "bad"))
        #expect(error.kind == .error && error.errorName == "org.example.Error.Bad" && error.body == [.string("bad")])
        #expect(error.error == DBusError(name: "org.example.Error.Bad", message: "bad"))
        // A name that is not a valid error name goes out as Failed.
        let renamed = call.makeErrorReply(DBusError(name: "bad name", message: "m"))
        #expect(renamed.errorName == DBusError.Name.failed.rawValue)
        #expect(call.makeErrorReply(DBusError(.failed, "")).body.isEmpty)
        #expect(reply.error == nil)
        #expect(DBusError(.noReply, "late").description == "org.freedesktop.DBus.Error.NoReply: late")
        #expect(DBusError(.noReply, "").description == "org.freedesktop.DBus.Error.NoReply")
        #expect(DBusError(.noReply, "x").is(.noReply))
    }
}
