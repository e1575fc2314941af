import DBus
import Testing

/// `DBusSignature` parsing: every valid shape, and each rule of the specification broken once.
@Suite struct SignatureTests {
    @Test(arguments: [
        "", "y", "b", "n", "q", "i", "u", "x", "t", "d", "s", "o", "g", "h", "v",
        "ybnqiuxtdsoghv", "ay", "as", "aay", "av", "a{sv}", "a{qv}", "a{oa{sa{sv}}}", "a{ys}", "a{hh}", "a{gv}",
        "(i)", "(ii)", "(i(ii))", "a(yv)", "(a{sv}as)", "sa{sv}as", "a{s(ia{sv})}",
    ])
    func acceptsValidSignatures(_ text: String) throws {
        let signature = try DBusSignature(text)
        #expect(signature.rawValue == text)
        // The parsed types print back as the same text.
        #expect(DBusSignature(types: signature.types).rawValue == text)
    }

    @Test func parsesIntoCompleteTypes() throws {
        #expect(try DBusSignature("").types == [])
        #expect(try DBusSignature("ya{sv}(ib)").types == [
            .byte, .array(.dictEntry(key: .string, value: .variant)), .structure([.int32, .boolean]),
        ])
        #expect(try DBusSignature("aa{oa{sa{sv}}}").types == [
            .array(.array(.dictEntry(key: .objectPath, value: .array(.dictEntry(key: .string, value: .array(.dictEntry(key: .string, value: .variant)))))))
        ])
        #expect(try DBusSignature("v").isSingleCompleteType)
        #expect(try !DBusSignature("ss").isSingleCompleteType)
        #expect(try !DBusSignature("").isSingleCompleteType)
    }

    @Test func acceptsTheMaximumNesting() throws {
        let arrays = String(repeating: "a", count: 32) + "y"
        #expect(try DBusSignature(arrays).types.count == 1)
        let structs = String(repeating: "(", count: 32) + "y" + String(repeating: ")", count: 32)
        #expect(try DBusSignature(structs).types.count == 1)
        // 32 arrays and 32 structs together: 64 levels, the total limit.
        let both = String(repeating: "a(", count: 32) + "y" + String(repeating: ")", count: 32)
        #expect(try DBusSignature(both).types.count == 1)
        let longest = String(repeating: "y", count: 255)
        #expect(try DBusSignature(longest).types.count == 255)
    }

    @Test(arguments: [
        ("z", DBusSignatureError.unknownTypeCode("z", at: 0)),
        ("ia", .unexpectedEnd),
        ("a", .unexpectedEnd),
        ("aa", .unexpectedEnd),
        ("(", .unexpectedEnd),
        ("(i", .unexpectedEnd),
        ("a{", .unexpectedEnd),
        ("a{s", .unexpectedEnd),
        ("a{sv", .unexpectedEnd),
        ("()", .emptyStructure(at: 0)),
        ("i()", .emptyStructure(at: 1)),
        ("{sv}", .dictEntryOutsideArray(at: 0)),
        ("({sv})", .dictEntryOutsideArray(at: 1)),
        ("a{vs}", .dictKeyNotBasic(at: 2)),
        ("a{(i)s}", .dictKeyNotBasic(at: 2)),
        ("a{ays}", .dictKeyNotBasic(at: 2)),
        ("a{s}", .badDictEntry(at: 1)),
        ("a{sss}", .badDictEntry(at: 1)),
        (")", .unbalanced(at: 0)),
        ("i)", .unbalanced(at: 1)),
        ("}", .unbalanced(at: 0)),
        ("(i}", .unbalanced(at: 2)),
        ("a)", .unbalanced(at: 1)),
        (String(repeating: "a", count: 33) + "y", .tooDeep(at: 32)),
        (String(repeating: "(", count: 33) + "y" + String(repeating: ")", count: 33), .tooDeep(at: 32)),
        (String(repeating: "y", count: 256), .tooLong(256)),
    ] as [(String, DBusSignatureError)])
    func rejectsEachBrokenRule(_ text: String, _ expected: DBusSignatureError) {
        #expect(throws: expected) { try DBusSignature(text) }
    }

    @Test func rejectsDictEntriesNestedTooDeepInStructs() {
        // Dict entries count as structs for the nesting limit.
        let text = String(repeating: "(", count: 32) + "a{sv}" + String(repeating: ")", count: 32)
        #expect(throws: DBusSignatureError.self) { try DBusSignature(text) }
    }

    @Test func describesErrorsReadably() {
        #expect(DBusSignatureError.unknownTypeCode("z", at: 3).description.contains("'z'"))
        #expect(DBusSignatureError.tooLong(300).description.contains("300"))
    }

    @Test func typeSignaturesAndClassification() {
        #expect(DBusType.array(.dictEntry(key: .string, value: .variant)).signature == "a{sv}")
        #expect(DBusType.structure([.byte, .array(.string)]).signature == "(yas)")
        #expect(DBusType.unixFD.isBasic && DBusType.unixFD.isFixedSize)
        #expect(DBusType.string.isBasic && !DBusType.string.isFixedSize)
        #expect(!DBusType.variant.isBasic)
        #expect(!DBusType.array(.byte).isBasic)
        #expect(DBusType.structure([.int32]).code == "(")
        #expect(DBusType.dictEntry(key: .string, value: .variant).code == "{")
    }
}
