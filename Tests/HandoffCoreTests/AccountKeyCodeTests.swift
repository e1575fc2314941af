import Testing
@testable import HandoffCore

@Suite struct AccountKeyCodeTests {
    static let code = AccountKeyCode.encode(Fixture.accountA)
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    @Test("The codes match the independently generated vectors")
    func vectors() throws {
        for vector in VectorFile.shared.exportCodes {
            let key = try AccountKey(name: "v", secret: bytes(hex: vector.accountSecret))
            #expect(AccountKeyCode.encode(key) == vector.code)
            #expect(try AccountKeyCode.decode(vector.code, name: "v") == key)
        }
    }

    @Test("Shape: 56 symbols in 14 groups of 4, version symbol first")
    func shape() {
        let groups = Self.code.split(separator: "-")
        #expect(groups.count == 14)
        #expect(groups.allSatisfy { $0.count == 4 })
        #expect(Self.code.first == "1")
        #expect(Self.code.allSatisfy { $0 == "-" || Self.alphabet.contains($0) })
    }

    @Test("Round trip for random keys, under the name given at import")
    func roundTrip() throws {
        var generator = SeededGenerator(seed: 21)
        for _ in 0..<200 {
            let key = try AccountKey.generate(name: "Home", using: &generator)
            let imported = try AccountKeyCode.decode(AccountKeyCode.encode(key), name: "Home")
            #expect(imported == key)
            #expect(try AccountKeyCode.decode(AccountKeyCode.encode(key), name: "Other").id == key.id)
        }
    }

    @Test("Input is case-insensitive, ignores spaces and dashes, reads I/L as 1 and O as 0")
    func tolerantInput() throws {
        let plain = Self.code.filter { $0 != "-" }
        #expect(try AccountKeyCode.decode(plain, name: "Vector A") == Fixture.accountA)
        #expect(try AccountKeyCode.decode(Self.code.lowercased(), name: "Vector A") == Fixture.accountA)
        #expect(try AccountKeyCode.decode(Self.code.replacingOccurrences("-", " "), name: "Vector A") == Fixture.accountA)
        #expect(try AccountKeyCode.decode("  " + Self.code.replacingOccurrences("-", " - ") + "\n", name: "Vector A") == Fixture.accountA)
        let misread = String(Self.code.map { $0 == "1" ? "l" : $0 == "0" ? "O" : $0 })
        #expect(try AccountKeyCode.decode(misread, name: "Vector A") == Fixture.accountA)
    }

    @Test("Every single-character substitution is detected")
    func substitutions() {
        let symbols = Array(Self.code.filter { $0 != "-" })
        var checked = 0
        for position in symbols.indices {
            for replacement in Self.alphabet where replacement != symbols[position] {
                var typo = symbols
                typo[position] = replacement
                let result = Result { () throws(AccountKeyCodeError) in try AccountKeyCode.decode(String(typo), name: "A") }
                guard case .failure(let error) = result else {
                    Issue.record("substitution at \(position) by \(replacement) not detected")
                    continue
                }
                // The version symbol may fail its own check first; everything else is a checksum error
                // (or impossible padding, which is also a detected typo).
                #expect(error == .checksumMismatch || error == .nonZeroPadding || position == 0)
                checked += 1
            }
        }
        #expect(checked == 56 * 31)
    }

    @Test("Every swap of two adjacent different characters is detected")
    func transpositions() throws {
        var generator = SeededGenerator(seed: 22)
        for _ in 0..<20 {
            let key = try AccountKey.generate(name: "A", using: &generator)
            let symbols = Array(AccountKeyCode.encode(key).filter { $0 != "-" })
            for position in 0..<(symbols.count - 1) where symbols[position] != symbols[position + 1] {
                var typo = symbols
                typo.swapAt(position, position + 1)
                #expect(throws: AccountKeyCodeError.self, "swap at \(position)") { try AccountKeyCode.decode(String(typo), name: "A") }
            }
        }
    }

    @Test("Malformed codes give specific errors")
    func malformed() {
        #expect(throws: AccountKeyCodeError.wrongLength(55)) { try AccountKeyCode.decode(String(Self.code.dropLast()), name: "A") }
        #expect(throws: AccountKeyCodeError.wrongLength(57)) { try AccountKeyCode.decode(Self.code + "0", name: "A") }
        #expect(throws: AccountKeyCodeError.wrongLength(0)) { try AccountKeyCode.decode("", name: "A") }
        #expect(throws: AccountKeyCodeError.invalidCharacter("U", position: 2)) { try AccountKeyCode.decode("1U", name: "A") }
        #expect(throws: AccountKeyCodeError.invalidCharacter("é", position: 1)) { try AccountKeyCode.decode("é", name: "A") }
        #expect(throws: AccountKeyCodeError.invalidName(.invalidName("", .empty))) { try AccountKeyCode.decode(Self.code, name: "") }
    }

    @Test("A well-formed code of another version is refused as such")
    func otherVersion() throws {
        // Build a version-2 code with a valid check, as a future encoder would.
        var symbols = Array(Self.code.filter { $0 != "-" }).map { UInt8(Self.alphabet.firstIndex(of: $0)!) }
        symbols[0] = 2
        let sum = symbols[..<53].enumerated().reduce(0) { $0 + ($1.offset + 2) * Int($1.element) }
        let check = (AccountKeyCode.prime - sum % AccountKeyCode.prime) % AccountKeyCode.prime
        symbols.replaceSubrange(53..<56, with: [UInt8(check / 1024), UInt8(check / 32 % 32), UInt8(check % 32)])
        let code = String(symbols.map { Self.alphabet[Int($0)] })
        #expect(throws: AccountKeyCodeError.unsupportedVersion(2)) { try AccountKeyCode.decode(code, name: "A") }
    }
}
