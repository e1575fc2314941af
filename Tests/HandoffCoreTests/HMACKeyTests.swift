import Crypto
import Testing
@testable import HandoffCore

/// `HMACKey` wraps swift-crypto's `HMAC<SHA256>`, prepared once per key and
/// copied per message. These tests check the wrapper hands key and message
/// through unchanged, that the prepared state is never consumed, and that
/// the beacon's MAC is the plain HMAC of `context ‖ payload[0..<19]`.
@Suite struct HMACKeyTests {
    static func pattern(_ count: Int, seed: Int = 0) -> [UInt8] { (0..<count).map { UInt8((($0 * 7) + seed) & 0xff) } }

    @Test(
        "RFC 4231 test cases 1, 2 and 6 (short key, short key and message, key longer than a block)",
        arguments: [
            ([UInt8](repeating: 0x0b, count: 20), Array("Hi There".utf8),
             "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7"),
            (Array("Jefe".utf8), Array("what do ya want for nothing?".utf8),
             "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"),
            ([UInt8](repeating: 0xaa, count: 131), Array("Test Using Larger Than Block-Size Key - Hash Key First".utf8),
             "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"),
        ])
    func rfc4231(key: [UInt8], message: [UInt8], expected: String) {
        #expect(Hex.encode(HMACKey(bytes: key).authenticationCode(for: message)) == expected)
    }

    /// Known answers from Python's hmac module; message byte i = (7 i + 2) mod 256.
    @Test(
        "HMAC-SHA256 with short, block-sized and long keys and messages around the block size",
        arguments: [
            (20, 8, "d415e3bba75d7c514e569c5f9463bb09edf0297680168e72887a153762bb798b"),
            (32, 31, "1e86715e6d2b30b2b85999ceeebc0124106ae627ab35aff685bcaf0b16c4f317"),
            (64, 50, "cde59ed04369046c74c764dbd75a191a60690371572eceeda250163afbbf1952"),
            (65, 13, "f47fc765c2ad1f9a4ea350b7a59a3d733739aff005e199fee825098c7ebdd904"),
            (131, 54, "491eb2a96dc9865ba3c9c7e0b3895e67b085eaf6c97ae66ca06480e7749a8bd9"),
            (131, 152, "679acaa9aba0e5d9431a4cf6f9dcbe2ef1c616cc80312ab0b884ce2c3d4df14c"),
        ])
    func knownAnswers(keyLength: Int, messageLength: Int, expected: String) {
        let key = HMACKey(bytes: Self.pattern(keyLength, seed: 1))
        #expect(Hex.encode(key.authenticationCode(for: Self.pattern(messageLength, seed: 2))) == expected)
    }

    @Test("A prepared key gives the same MAC every time, whatever was authenticated in between")
    func preparedStateIsNotConsumed() {
        let key = HMACKey(bytes: Self.pattern(32, seed: 3))
        let first = key.authenticationCode(for: Array("first".utf8))
        let second = key.authenticationCode(for: Array("second".utf8))
        #expect(first != second)
        #expect(key.authenticationCode(for: Array("first".utf8)) == first)
        let copy = key
        #expect(copy.authenticationCode(for: Array("second".utf8)) == second)
        #expect(key.authenticationCode(for: Array("second".utf8)) == second)
        let oneShot = HMAC<SHA256>.authenticationCode(for: Array("first".utf8), using: SymmetricKey(data: Self.pattern(32, seed: 3)))
        #expect(Array(oneShot) == first)
    }

    @Test("One key shared by concurrent tasks gives every task the right MACs")
    func sharedAcrossTasks() async {
        let key = HMACKey(bytes: Self.pattern(32, seed: 4))
        let expected = (0..<64).map { HMAC<SHA256>.authenticationCode(for: [UInt8($0)], using: SymmetricKey(data: Self.pattern(32, seed: 4))) }.map { Array($0) }
        let results = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    (0..<2_000).allSatisfy { index in key.authenticationCode(for: [UInt8(index % 64)]) == expected[index % 64] }
                }
            }
            return await group.reduce(into: [Bool]()) { $0.append($1) }
        }
        #expect(results == [true, true, true, true])
    }

    @Test("The beacon MAC is HMAC-SHA256(K_mac, context ‖ payload[0..<19]) truncated to 5 bytes")
    func beaconMACMatchesOneShotHMAC() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let keyBytes = (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let key = HMACKey(bytes: keyBytes)
            let epoch = Epoch(index: UInt64.random(in: 0...UInt64.max, using: &generator), length: UInt32.random(in: 1...UInt32.max, using: &generator))
            let payload = (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let (word, byte) = payload.withUnsafeBytes { BeaconCrypto.mac(key: key, context: epoch.context, payload: $0.baseAddress!) }
            let full = HMAC<SHA256>.authenticationCode(for: epoch.context.bytes + payload[0..<19], using: SymmetricKey(data: keyBytes))
            #expect(Array(full.prefix(5)) == [UInt8(word >> 24), UInt8(word >> 16 & 0xff), UInt8(word >> 8 & 0xff), UInt8(word & 0xff), byte])
        }
    }
}
