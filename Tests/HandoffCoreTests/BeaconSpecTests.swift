import Foundation
import Testing
@testable import HandoffCore

/// docs/beacon-format.md is the spec; these check that the constants it
/// states are the ones the code uses (the vectors check the algorithms).
@Suite struct BeaconSpecTests {
    static let spec: String = {
        let url = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("docs/beacon-format.md")
        guard let text = try? String(contentsOf: url, encoding: .utf8) else { fatalError("cannot read \(url.path)") }
        return text
    }()

    @Test("Every HKDF label and the salt in the key schedule table are the code's")
    func keyScheduleLabels() {
        for label in AccountKeySchedule.Label.allCases {
            #expect(Self.spec.contains("| `\(label.rawValue)`"), "label \(label.rawValue) missing from the spec's table")
        }
        #expect(Self.spec.contains("salt = \"\(String(decoding: AccountKeySchedule.salt, as: UTF8.self))\""))
        #expect(Set(AccountKeySchedule.Label.allCases.map(\.rawValue)).count == AccountKeySchedule.Label.allCases.count)
    }

    @Test("The layout table's offsets and lengths are the code's")
    func layout() {
        let rows: [(offset: Int, length: Int, field: String)] = [
            (BeaconFormat.headerOffset, 1, "header"),
            (BeaconFormat.tagOffset, BeaconFormat.saltOffset - BeaconFormat.tagOffset, "recognition tag"),
            (BeaconFormat.saltOffset, BeaconFormat.ciphertextOffset - BeaconFormat.saltOffset, "salt"),
            (BeaconFormat.ciphertextOffset, BeaconFormat.ciphertextLength, "ciphertext"),
            (BeaconFormat.macOffset, BeaconFormat.macLength, "MAC"),
        ]
        for row in rows {
            #expect(Self.spec.contains("| \(row.offset) | \(row.length) | \(row.field) |"), "row \(row.field)")
        }
        #expect(BeaconFormat.macOffset + BeaconFormat.macLength == BeaconFormat.payloadLength)
        #expect(BeaconFormat.macLength * 8 >= 32)
        #expect(Self.spec.contains("| 24 | … data |"))
        #expect(Self.spec.contains("| **31** | total |"))
    }

    @Test("Section 11's example code, polynomial, version and limits are the code's")
    func exportCode() {
        #expect(Self.spec.contains(AccountKeyCode.encode(Fixture.accountA)))
        #expect(Self.spec.contains("poly `0x\(String(AccountKeyCode.polynomial, radix: 16, uppercase: true))`"))
        #expect(Self.spec.contains("(**`\(AccountKeyCode.version)`**"))
        #expect(Self.spec.contains("1–\(AccountKey.maximumNameLength) Unicode scalars and at most \(AccountKey.maximumNameBytes) UTF-8 bytes"))
    }
}
