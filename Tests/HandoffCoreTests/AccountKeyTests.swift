import Crypto
import PropertyBased
import Testing
@testable import HandoffCore

@Suite struct AccountKeyTests {
    /// HKDF-SHA256 (RFC 5869) written out from one-shot HMACs: a path to
    /// the sub-keys independent of swift-crypto's `HKDF` and of `HMACKey`.
    static func hkdf(secret: [UInt8], label: String, count: Int = 32) -> [UInt8] {
        let prk = HMAC<SHA256>.authenticationCode(for: secret, using: SymmetricKey(data: AccountKeySchedule.salt))
        let block = HMAC<SHA256>.authenticationCode(for: Array(label.utf8) + [1], using: SymmetricKey(data: Array(prk)))
        return Array(Array(block).prefix(count))
    }

    /// Whether `key` is the HMAC key `bytes`: both authenticate two probe
    /// messages alike (different keys agree with probability 2⁻⁵¹²).
    static func sameKey(_ key: HMACKey, _ bytes: [UInt8]) -> Bool {
        ["probe one", "probe two"].allSatisfy { probe in
            key.authenticationCode(for: Array(probe.utf8))
                == Array(HMAC<SHA256>.authenticationCode(for: Array(probe.utf8), using: SymmetricKey(data: bytes)))
        }
    }

    @Test("Sub-keys equal an independent HKDF written out from one-shot HMACs, for random secrets")
    func keyScheduleCrossCheck() async {
        await propertyCheck(count: 50, input: Gen.uint8().array(of: 32)) { secret in
            let key = try AccountKey(name: "cross check", secret: secret)
            let schedule = key.schedule
            typealias Label = AccountKeySchedule.Label
            #expect(Self.sameKey(schedule.recognitionTagKey, Self.hkdf(secret: secret, label: Label.recognitionTag.rawValue)))
            #expect(Self.sameKey(schedule.encryptionKey, Self.hkdf(secret: secret, label: Label.encryption.rawValue)))
            #expect(Self.sameKey(schedule.authenticationKey, Self.hkdf(secret: secret, label: Label.authentication.rawValue)))
            #expect(Self.sameKey(schedule.activityTypeHashKey, Self.hkdf(secret: secret, label: Label.activityTypeHash.rawValue)))
            let payload = schedule.payloadKey.withUnsafeBytes { Array($0) }
            #expect(payload == Self.hkdf(secret: secret, label: Label.payload.rawValue))
            let stream = schedule.streamKey.withUnsafeBytes { Array($0) }
            #expect(stream == Self.hkdf(secret: secret, label: Label.stream.rawValue))
            let id = Self.hkdf(secret: secret, label: Label.accountID.rawValue, count: 8)
            #expect(key.id.description == Hex.encode(id))
        }
    }

    @Test("Every sub-key differs from the others and from the raw secret")
    func subKeysAreDistinct() throws {
        let secret = Fixture.secretA
        let labels = AccountKeySchedule.Label.allCases.map { Self.hkdf(secret: secret, label: $0.rawValue) }
        #expect(Set(labels.map { Hex.encode($0) }).count == labels.count)
        #expect(!labels.contains(secret))
    }

    @Test("description, debugDescription, dump and interpolation never show the secret")
    func secretNeverPrinted() throws {
        let secret: [UInt8] = (0..<32).map { UInt8(0xA0 + $0 % 16) }
        let key = try AccountKey(name: "Home", secret: secret)
        var dumped = ""
        dump(key, to: &dumped)
        let renderings = [key.description, key.debugDescription, "\(key)", String(reflecting: key), dumped]
        let hex = Hex.encode(secret)
        for text in renderings {
            #expect(text.contains("Home"))
            #expect(text.contains(key.id.description))
            #expect(!text.lowercased().contains(hex.prefix(8)))
            #expect(!text.contains("160"))  // 0xA0 in decimal, as an array dump would show it
        }
        #expect(key.description == "AccountKey(name: \"Home\", id: \(key.id))")
    }

    @Test("Equality compares name and secret")
    func equality() throws {
        let a = try AccountKey(name: "A", secret: Fixture.secretA)
        #expect(a == (try AccountKey(name: "A", secret: Fixture.secretA)))
        #expect(a != (try AccountKey(name: "B", secret: Fixture.secretA)))
        var other = Fixture.secretA
        other[31] ^= 1
        #expect(a != (try AccountKey(name: "A", secret: other)))
        #expect(a.id != (try AccountKey(name: "A", secret: other)).id)
        #expect((try a.renamed(to: "B")).id == a.id)
    }

    @Test("The account ID is stable and parses back")
    func accountID() throws {
        #expect(Fixture.accountA.id.description == VectorFile.shared.beacons[0].accountID)
        #expect(AccountID(Fixture.accountA.id.description) == Fixture.accountA.id)
        #expect(AccountID("xyz") == nil)
        #expect(AccountID("0123456789abcdeg") == nil)
    }

    @Test("Generation uses the injected generator")
    func generation() throws {
        var first = SeededGenerator(seed: 1)
        var second = SeededGenerator(seed: 1)
        var third = SeededGenerator(seed: 2)
        let a = try AccountKey.generate(name: "A", using: &first)
        #expect(a == (try AccountKey.generate(name: "A", using: &second)))
        #expect(a != (try AccountKey.generate(name: "A", using: &third)))
        #expect(try AccountKey.generate(name: "x").id != AccountKey.generate(name: "x").id)
    }

    @Test("Secrets of the wrong length are refused", arguments: [0, 16, 31, 33, 64])
    func wrongSecretLength(count: Int) {
        #expect(throws: AccountKeyError.wrongSecretLength(count)) {
            try AccountKey(name: "A", secret: [UInt8](repeating: 1, count: count))
        }
    }

    @Test(
        "Invalid names are refused with the reason",
        arguments: [
            ("", AccountNameProblem.empty),
            (String(repeating: "x", count: 65), .tooLong),
            (String(repeating: "é", count: 101), .tooLong),
            // Counted in Unicode scalars, not grapheme clusters: 33 characters, 66 scalars.
            (String(repeating: "e\u{301}", count: 33), .tooLong),
            (String(repeating: "\u{1F600}", count: 51), .tooLong),  // 51 scalars, 204 bytes
            ("Home\u{A0}", .surroundingWhitespace),
            ("\u{3000}Home", .surroundingWhitespace),
            ("Ho\u{85}me", .controlCharacter),
            ("Ho\u{7F}me", .controlCharacter),
            ("Ho\u{9F}me", .controlCharacter),
            ("Ho\u{2029}me", .controlCharacter),
            ("Ho\r\nme", .controlCharacter),
            (" Home", .surroundingWhitespace),
            ("Home\t", .surroundingWhitespace),
            ("Ho\nme", .controlCharacter),
            ("Ho\u{0}me", .controlCharacter),
            ("Ho\u{2028}me", .controlCharacter),
            ("a/b", .pathSeparator),
            ("a\\b", .pathSeparator),
            (".hidden", .leadingDot),
            ("..", .leadingDot),
        ])
    func invalidNames(name: String, problem: AccountNameProblem) {
        #expect(throws: AccountKeyError.invalidName(name, problem)) { try AccountKey.validate(name: name) }
    }

    @Test(
        "Ordinary names are accepted",
        arguments: [
            "Home", "Work laptop", "été ☕", "a", "x.y", "O'Brien's devices", String(repeating: "x", count: 64),
            String(repeating: "e\u{301}", count: 32), String(repeating: "\u{1F600}", count: 50), "Ho\u{200B}me", "\u{301}Home",
        ])
    func validNames(name: String) throws {
        try AccountKey.validate(name: name)
        #expect(try AccountKey(name: name, secret: Fixture.secretA).name == name)
    }
}
