import Testing
@testable import HandoffCore

/// Known answers computed with Python's hashlib/hmac; messages are the
/// pattern byte i = (7 i + seed) mod 256.
@Suite struct SHA256StateTests {
    static func pattern(_ count: Int, seed: Int = 0) -> [UInt8] { (0..<count).map { UInt8((($0 * 7) + seed) & 0xff) } }

    static let digests: [(Int, String)] = [
        (0, "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
        (55, "576a1bf8d4478657e6dc4af9398544765c2a92cde28478b019235cfed315fc09"),
        (56, "9b20501dfd1d99161c257950f3444f3e49230c351c5c8e0943ef369f85f5205d"),
        (63, "30b345906b493f06f69444b6521113511c242f30e29840462950035043682f1e"),
        (64, "d8bc63b4fc1156e5e7d95a418b9bf54cd3174bedbc2db40f74895349b229b3c0"),
        (65, "1ee23b0fbcaecc1aff4a9e8f1645f35ab2c8e13609cd73b68df8b5e3f63ce073"),
        (119, "7a6589821178918ca8d9edaba5abfc1e9b2669564f4469b66885379c1530b2c8"),
        (120, "655250427d56b1b0eeb8497d21428704273458a01772d6881b65c0abac0f8a98"),
        (128, "54c9eb041badfd7064645067b107661fed6113197ce2dd066ba69618abd3732f"),
        (200, "b531abd8dae7232c861ac9f50aff9952d29c8d4c3772551cc5bce5d39d2cd08d"),
    ]

    @Test("SHA-256 of 'abc' (FIPS 180-4 example)")
    func abc() {
        let digest = Array("abc".utf8).withUnsafeBytes { SHA256State.digest($0) }
        #expect(Hex.encode(digest.bytes) == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    }

    @Test("SHA-256 across padding boundaries", arguments: digests)
    func digest(length: Int, expected: String) {
        let digest = Self.pattern(length).withUnsafeBytes { SHA256State.digest($0) }
        #expect(Hex.encode(digest.bytes) == expected)
    }

    @Test(
        "HMAC-SHA256 with short, block-sized and long keys",
        arguments: [
            (20, 8, "d415e3bba75d7c514e569c5f9463bb09edf0297680168e72887a153762bb798b"),
            (32, 31, "1e86715e6d2b30b2b85999ceeebc0124106ae627ab35aff685bcaf0b16c4f317"),
            (64, 50, "cde59ed04369046c74c764dbd75a191a60690371572eceeda250163afbbf1952"),
            (65, 13, "f47fc765c2ad1f9a4ea350b7a59a3d733739aff005e199fee825098c7ebdd904"),
            (131, 54, "491eb2a96dc9865ba3c9c7e0b3895e67b085eaf6c97ae66ca06480e7749a8bd9"),
            (131, 152, "679acaa9aba0e5d9431a4cf6f9dcbe2ef1c616cc80312ab0b884ce2c3d4df14c"),
        ])
    func hmac(keyLength: Int, messageLength: Int, expected: String) {
        let key = HMACSHA256Key(key: Self.pattern(keyLength, seed: 1))
        #expect(Hex.encode(key.authenticate(Self.pattern(messageLength, seed: 2))) == expected)
    }

    @Test("The beacon's one-block MAC equals the general HMAC path")
    func beaconMACMatchesGeneralHMAC() {
        var generator = SeededGenerator(seed: 7)
        for _ in 0..<200 {
            let key = HMACSHA256Key(key: (0..<32).map { _ in UInt8.random(in: 0...255, using: &generator) })
            let epoch = Epoch(index: UInt64.random(in: 0...UInt64.max, using: &generator), length: UInt32.random(in: 1...UInt32.max, using: &generator))
            let payload = (0..<24).map { _ in UInt8.random(in: 0...255, using: &generator) }
            let (word, byte) = payload.withUnsafeBytes { BeaconCrypto.mac(key: key, context: epoch.context, payload: $0.baseAddress!) }
            let full = key.authenticate(epoch.context.bytes + payload[0..<19])
            #expect(Array(full.prefix(5)) == [UInt8(word >> 24), UInt8(word >> 16 & 0xff), UInt8(word >> 8 & 0xff), UInt8(word & 0xff), byte])
        }
    }
}

@Suite struct ChaCha20KeyTests {
    @Test("ChaCha20 block function (RFC 8439 section 2.3.2 test vector)")
    func rfc8439BlockVector() {
        let key = ChaCha20Key(bytes: Array(0..<32))
        var block = [UInt8](repeating: 0, count: 64)
        block.withUnsafeMutableBytes { key.block(counter: 1, nonce: (0x0900_0000, 0x4a00_0000, 0), into: $0) }
        #expect(
            Hex.encode(block)
                == "10f1e7e4d13b5915500fdd1fa32071c4c7d1f4c733c068030422aa9ac3d46c4e"
                + "d2826446079faa0914c2d705d98b02a2b5129cd1de164eb9cbd083e8a2503c4e"
        )
        let first = key.firstWords(counter: 1, nonce: (0x0900_0000, 0x4a00_0000, 0))
        #expect(first.0 == 0xe4e7_f110 && first.1 == 0x1559_3bd1 && first.2 == 0x1fdd_0f50)
    }
}
