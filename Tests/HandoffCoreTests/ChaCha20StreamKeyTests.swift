import Testing
@testable import HandoffCore

/// `ChaCha20StreamKey` runs swift-crypto's `Insecure.ChaCha20CTR` with the
/// beacon's nonce layout: the 8 nonce bytes first, then 4 zero bytes, counter 0.
@Suite struct ChaCha20StreamKeyTests {
    /// RFC 8439 section 2.4.2: key 00 01 … 1f, nonce 00 00 00 00 00 00 00 4a
    /// 00 00 00 00, counter 1. Our counter starts at 0, so block 1 is keystream
    /// bytes 64..<128 onwards. The nonce's last four bytes are zero, as in the
    /// beacon: had the zeros gone first, this would not match.
    @Test("RFC 8439 section 2.4.2 encryption vector, through the beacon's nonce layout")
    func rfc8439() {
        let key = ChaCha20StreamKey(bytes: Array(0..<32) as [UInt8])
        let plaintext = Array(
            "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the future, sunscreen would be it."
                .utf8)
        let stream = key.keystream(nonce: [0, 0, 0, 0, 0, 0, 0, 0x4a], count: 64 + plaintext.count)
        let ciphertext = zip(plaintext, stream[64...]).map { $0 ^ $1 }
        #expect(
            Hex.encode(ciphertext)
                == "6e2e359a2568f98041ba0728dd0d6981e97e7aec1d4360c20a27afccfd9fae0b"
                + "f91b65c5524733ab8f593dabcd62b3571639d624e65152ab8f530c359f0861d8"
                + "07ca0dbf500d6a6156a38e088a22b65e52bc514d16ccf806818ce91ab7793736"
                + "5af90bbf74a35be6b40b8eedf2785e42874d"
        )
    }

    @Test("Applying the keystream twice restores the bytes; another nonce gives another stream")
    func involution() {
        let key = ChaCha20StreamKey(bytes: [UInt8](repeating: 0x42, count: 32))
        let nonce: [UInt8] = [1, 2, 3, 4, 5, 6, 7, 8]
        let original: [UInt8] = Array(100..<111)
        var bytes = original
        nonce.withUnsafeBytes { n in bytes.withUnsafeMutableBytes { key.apply(nonce: n.baseAddress!, to: $0.baseAddress!, count: 11) } }
        #expect(bytes != original)
        #expect(bytes == zip(original, key.keystream(nonce: nonce, count: 11)).map { $0 ^ $1 })
        nonce.withUnsafeBytes { n in bytes.withUnsafeMutableBytes { key.apply(nonce: n.baseAddress!, to: $0.baseAddress!, count: 11) } }
        #expect(bytes == original)
        #expect(key.keystream(nonce: [1, 2, 3, 4, 5, 6, 7, 9], count: 11) != key.keystream(nonce: nonce, count: 11))
    }
}
