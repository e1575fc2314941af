import Testing
@testable import HandoffCore

@Suite struct AccountKeyFileTests {
    static let vectors = VectorFile.shared.keyFiles
    static let sample = AccountKeyFile(key: Fixture.accountA, created: 1_750_000_000)

    @Test("Encoding reproduces the vector text; parsing gives the vector's key")
    func vectors() throws {
        for vector in Self.vectors {
            let key = try AccountKey(name: vector.name, secret: bytes(hex: vector.accountSecret))
            let file = AccountKeyFile(key: key, created: vector.created)
            #expect(file.encoded() == vector.text)
            #expect(try AccountKeyFile.parse(vector.text) == file)
        }
    }

    @Test("Every input vector parses to its key or fails with its error (CRLF, separators, hex case, names)")
    func inputVectors() throws {
        let inputs = VectorFile.shared.keyFileInputs
        #expect(inputs.count >= 25)
        for vector in inputs {
            let result = Result { () throws(AccountKeyFileError) in try AccountKeyFile.parse(vector.text) }
            switch (result, vector.result) {
            case (.success(let file), .parsed(let name, let created, let secret)):
                #expect(file.key == (try AccountKey(name: name, secret: bytes(hex: secret))), "\(vector.name)")
                #expect(file.key.name.unicodeScalars.elementsEqual(name.unicodeScalars), "\(vector.name)")
                #expect(file.created == created, "\(vector.name)")
                // Parsed files round-trip to the canonical LF text.
                #expect(try AccountKeyFile.parse(file.encoded()) == file, "\(vector.name)")
            case (.failure(let error), .error(let expected)):
                #expect(label(error) == expected, "\(vector.name)")
            default:
                Issue.record("\(vector.name): got \(result), expected \(vector.result)")
            }
        }
    }

    @Test("A CRLF key file: same checksum as the LF file, so the CR is not covered")
    func crlf() throws {
        let text = Self.sample.encoded()
        let crlf = text.replacingOccurrences("\n", "\r\n")
        #expect(try AccountKeyFile.parse(crlf) == Self.sample)
        // A CR anywhere but before the LF is content: a lone-CR file is one comment line.
        #expect(throws: AccountKeyFileError.notAnAccountKeyFile) { try AccountKeyFile.parse(text.replacingOccurrences("\n", "\r")) }
        // Other Unicode line breaks do not end lines either.
        #expect(throws: AccountKeyFileError.self) { try AccountKeyFile.parse(text.replacingOccurrences("\n", "\u{2028}")) }
        #expect(throws: AccountKeyFileError.self) { try AccountKeyFile.parse(text.replacingOccurrences("\n", "\u{85}")) }
    }

    @Test("Round trip, and the text contains the documented lines")
    func roundTrip() throws {
        let text = Self.sample.encoded()
        #expect(try AccountKeyFile.parse(text) == Self.sample)
        let lines = text.split(separator: "\n")
        #expect(lines.count == 6)
        #expect(lines[1] == "handoff-account-key: 1")
        #expect(lines[2] == "name: Vector A")
        #expect(lines[3] == "created: 2025-06-15T15:06:40Z")
        #expect(lines[4] == "secret: " + Hex.encode(Fixture.secretA))
        #expect(lines[5].hasPrefix("checksum: ") && lines[5].count == 18)
    }

    @Test("Every truncation gives an error, never a crash or a wrong key")
    func truncated() {
        let text = Array(Self.sample.encoded().utf8)
        // The last byte is the final newline: without it the file is still whole.
        for length in 0..<(text.count - 1) {
            let prefix = String(decoding: text[..<length], as: UTF8.self)
            #expect(throws: AccountKeyFileError.self, "prefix of \(length) bytes") { try AccountKeyFile.parse(prefix) }
        }
        #expect(throws: AccountKeyFileError.notAnAccountKeyFile) { try AccountKeyFile.parse("") }
        let cutInSecret = String(Self.sample.encoded().prefix(170))
        #expect(throws: AccountKeyFileError.missingField("checksum")) { try AccountKeyFile.parse(cutInSecret) }
    }

    @Test("Changing any character of a field is detected")
    func corruption() {
        let text = Self.sample.encoded()
        let characters = Array(text)
        let headerEnd = characters.firstIndex(of: "\n")! + 1
        for index in headerEnd..<characters.count where characters[index] != "\n" {
            var damaged = characters
            damaged[index] = characters[index] == "0" ? "1" : "0"
            let result = Result { try AccountKeyFile.parse(String(damaged)) }
            if case .success(let file) = result {
                Issue.record("damage at \(index) parsed as \(file.key)")
            }
        }
    }

    @Test("Specific errors for specific damage")
    func specificErrors() {
        let text = Self.sample.encoded()
        func replacing(_ old: String, _ new: String) -> String {
            var lines = text.components(separatedBy: "\n")
            lines = lines.map { $0.hasPrefix(old) ? new : $0 }
            return lines.joined(separator: "\n")
        }
        let checksumLine = text.components(separatedBy: "\n")[5]
        let checksum = String(checksumLine.dropFirst("checksum: ".count))
        let wrong = checksum.first == "0" ? "1" + checksum.dropFirst() : "0" + checksum.dropFirst()
        #expect(throws: AccountKeyFileError.checksumMismatch(stored: wrong, computed: checksum)) {
            try AccountKeyFile.parse(replacing("checksum:", "checksum: \(wrong)"))
        }
        #expect(throws: AccountKeyFileError.invalidChecksum(line: 6)) { try AccountKeyFile.parse(replacing("checksum:", "checksum: xyz")) }
        #expect(throws: AccountKeyFileError.unsupportedVersion("2")) { try AccountKeyFile.parse(replacing("handoff-account-key:", "handoff-account-key: 2")) }
        #expect(throws: AccountKeyFileError.invalidSecret(line: 5, digits: 63)) {
            try AccountKeyFile.parse(replacing("secret:", "secret: " + String(Hex.encode(Fixture.secretA).dropLast())))
        }
        #expect(throws: AccountKeyFileError.invalidSecret(line: 5, digits: 64)) {
            try AccountKeyFile.parse(replacing("secret:", "secret: " + String(repeating: "g", count: 64)))
        }
        #expect(throws: AccountKeyFileError.invalidDate("2025-02-30T00:00:00Z", line: 4)) {
            try AccountKeyFile.parse(replacing("created:", "created: 2025-02-30T00:00:00Z"))
        }
        #expect(throws: AccountKeyFileError.unknownField("colour", line: 3)) { try AccountKeyFile.parse(replacing("name:", "colour: blue")) }
        #expect(throws: AccountKeyFileError.unexpectedField("secret", expected: "name", line: 3)) {
            try AccountKeyFile.parse(replacing("name:", "secret: 00"))
        }
        #expect(throws: AccountKeyFileError.malformedLine(3)) { try AccountKeyFile.parse(replacing("name:", "name Vector A")) }
        #expect(throws: AccountKeyFileError.trailingContent(line: 7)) { try AccountKeyFile.parse(text + "name: again\n") }
        #expect(throws: AccountKeyFileError.notAnAccountKeyFile) { try AccountKeyFile.parse("hello world\n") }
        #expect(throws: AccountKeyFileError.notAnAccountKeyFile) { try AccountKeyFile.parse("-----BEGIN OPENSSH PRIVATE KEY-----\n") }
    }

    @Test("CRLF line ends, extra comments and blank lines are accepted; upper-case hex is not")
    func tolerantLayout() throws {
        let text = Self.sample.encoded()
        #expect(try AccountKeyFile.parse(text.replacingOccurrences("\n", "\r\n")) == Self.sample)
        #expect(try AccountKeyFile.parse("\n# mine\n\n" + text.replacingOccurrences("\nsecret", "\n# note\n\nsecret") + "\n\n") == Self.sample)
        // Hex digits are lower case: the same secret in capitals is refused.
        let capitals = text.replacingOccurrences(Hex.encode(Fixture.secretA), Hex.encode(Fixture.secretA).uppercased())
        #expect(throws: AccountKeyFileError.invalidSecret(line: 5, digits: 64)) { try AccountKeyFile.parse(capitals) }
    }

    @Test("Errors explain themselves")
    func descriptions() {
        #expect(AccountKeyFileError.missingField("checksum").description.contains("truncated"))
        #expect(AccountKeyFileError.checksumMismatch(stored: "a", computed: "b").description.contains("corrupt"))
        #expect(AccountKeyFileError.unsupportedVersion("9").description.contains("version 9"))
    }
}

extension String {
    func replacingOccurrences(_ target: String, _ replacement: String) -> String {
        components(separatedBy: target).joined(separator: replacement)
    }
}

@Suite struct UTCTimestampTests {
    @Test(
        "Formatting and parsing agree with known dates",
        arguments: [
            (UInt64(0), "1970-01-01T00:00:00Z"), (951_782_400, "2000-02-29T00:00:00Z"),
            (1_750_000_000, "2025-06-15T15:06:40Z"), (4_107_542_399, "2100-02-28T23:59:59Z"),
            (4_107_542_400, "2100-03-01T00:00:00Z"), (253_402_300_799, "9999-12-31T23:59:59Z"),
        ])
    func known(seconds: UInt64, text: String) {
        #expect(UTCTimestamp.format(seconds) == text)
        #expect(UTCTimestamp.parse(text) == seconds)
    }

    @Test("Every day for 60 years round-trips")
    func everyDay() {
        for day in stride(from: UInt64(0), to: 60 * 366, by: 1) {
            let seconds = day * 86_400 + 3_723
            #expect(UTCTimestamp.parse(UTCTimestamp.format(seconds)) == seconds)
        }
    }

    @Test(
        "Malformed timestamps are refused",
        arguments: [
            "", "2025-06-15", "2025-06-15 15:06:40Z", "2025-06-15T15:06:40", "1969-12-31T23:59:59Z",
            "2025-13-01T00:00:00Z", "2025-00-01T00:00:00Z", "2023-02-29T00:00:00Z", "2025-06-31T00:00:00Z",
            "2025-06-15T24:00:00Z", "2025-06-15T15:60:00Z", "2025-06-15T15:06:60Z", "2025-06-15T15:06:4xZ",
            "+025-06-15T15:06:40Z",
        ])
    func malformed(text: String) {
        #expect(UTCTimestamp.parse(text) == nil)
    }
}
