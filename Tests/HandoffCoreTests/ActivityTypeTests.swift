import Testing
@testable import HandoffCore

@Suite struct ActivityTypeTests {
    @Test(
        "Reverse-DNS types are accepted",
        arguments: ["a.b", "org.handoff.example.browse", "com.example.Editor.document-1", "net.x_y.z9", "0.9"])
    func valid(text: String) throws {
        #expect(try ActivityType(text).rawValue == text)
    }

    @Test(
        "Other strings are refused with the rule that failed",
        arguments: [
            ("", ActivityTypeError.badLength(0)),
            ("ab", .badLength(2)),
            (String(repeating: "a.", count: 128), .badLength(256)),
            ("NSUserActivityTypeBrowsingWeb", .notReverseDNS("NSUserActivityTypeBrowsingWeb")),
            ("com..example", .badLabel("com..example")),
            (".com.example", .badLabel(".com.example")),
            ("com.example.", .badLabel("com.example.")),
            ("com.-example", .badLabel("com.-example")),
            ("com." + String(repeating: "x", count: 64), .badLabel("com." + String(repeating: "x", count: 64))),
            ("com.exa mple", .badCharacter("com.exa mple")),
            ("com.exämple", .badCharacter("com.exämple")),
            ("com.example/x", .badCharacter("com.example/x")),
        ])
    func invalid(text: String, error: ActivityTypeError) {
        #expect(throws: error) { try ActivityType(text) }
    }

    @Test("Type hashes match the vectors and depend on the account")
    func hashes() throws {
        for vector in VectorFile.shared.beacons {
            #expect(vector.type.hash(for: vector.account).description == vector.typeHash, "\(vector.name)")
        }
        #expect(Fixture.browse.hash(for: Fixture.accountA) != Fixture.browse.hash(for: Fixture.accountB))
        #expect(Fixture.browse.hash(for: Fixture.accountA) != Fixture.edit.hash(for: Fixture.accountA))
    }

    @Test("The resolver maps declared types back and reports unknown hashes")
    func resolver() throws {
        let resolver = ActivityTypeResolver(account: Fixture.accountA, declaredTypes: [Fixture.browse, Fixture.edit, Fixture.browse])
        #expect(resolver.count == 2)
        #expect(resolver.account == Fixture.accountA.id)
        #expect(resolver.resolve(Fixture.browse.hash(for: Fixture.accountA)) == .known(Fixture.browse))
        #expect(resolver.resolve(Fixture.edit.hash(for: Fixture.accountA)) == .known(Fixture.edit))
        // The same type hashed under another account is unknown here.
        let foreign = Fixture.browse.hash(for: Fixture.accountB)
        #expect(resolver.resolve(foreign) == .unknown(foreign))
        #expect(resolver.resolve(foreign).description == "unknown type (hash \(foreign))")
        #expect(resolver.resolve(foreign).type == nil)
        #expect(resolver.ambiguousHashes.isEmpty)
    }
}
