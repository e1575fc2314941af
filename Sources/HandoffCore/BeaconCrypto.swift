/// The beacon's two cryptographic operations on a raw 24-byte payload.
enum BeaconCrypto {
    /// The 5-byte MAC over `context ‖ payload[0..<19]` (31 bytes: one SHA-256
    /// block), as its first 4 bytes (big-endian) and its fifth byte.
    @inline(__always)
    static func mac(key: HMACSHA256Key, context: EpochContext, payload p: UnsafeRawPointer) -> (UInt32, UInt8) {
        @inline(__always) func word(_ offset: Int) -> UInt32 {
            UInt32(bigEndian: p.loadUnaligned(fromByteOffset: offset, as: UInt32.self))
        }
        let tail = UInt32(p.load(fromByteOffset: 16, as: UInt8.self)) << 24
            | UInt32(p.load(fromByteOffset: 17, as: UInt8.self)) << 16
            | UInt32(p.load(fromByteOffset: 18, as: UInt8.self)) << 8
            | 0x80  // padding starts right after the 31-byte message
        var inner = key.inner
        inner.compress(
            context.length, context.indexHigh, context.indexLow, word(0),
            word(4), word(8), word(12), tail,
            0, 0, 0, 0, 0, 0, 0, (64 + 31) * 8
        )
        var outer = key.outer
        outer.compress(
            inner.a, inner.b, inner.c, inner.d, inner.e, inner.f, inner.g, inner.h,
            0x8000_0000, 0, 0, 0, 0, 0, 0, (64 + 32) * 8
        )
        return (outer.a, UInt8(truncatingIfNeeded: outer.b >> 24))
    }

    /// The 11 keystream bytes for a payload whose first 8 bytes (header, tag,
    /// salt) are the nonce: ChaCha20 block 0 with nonce `payload[0..<8] ‖ 0x00000000`.
    @inline(__always)
    static func keystream(cipher: ChaCha20Key, payload p: UnsafeRawPointer) -> (UInt32, UInt32, UInt32) {
        let nonce0 = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 0, as: UInt32.self))
        let nonce1 = UInt32(littleEndian: p.loadUnaligned(fromByteOffset: 4, as: UInt32.self))
        return cipher.firstWords(counter: 0, nonce: (nonce0, nonce1, 0))
    }

    /// XORs the 11 keystream bytes into `payload[8..<19]`.
    @inline(__always)
    static func applyKeystream(_ stream: (UInt32, UInt32, UInt32), to p: UnsafeMutableRawPointer) {
        func xor(_ offset: Int, _ byte: UInt32) {
            let current = p.load(fromByteOffset: BeaconFormat.ciphertextOffset + offset, as: UInt8.self)
            p.storeBytes(
                of: current ^ UInt8(truncatingIfNeeded: byte), toByteOffset: BeaconFormat.ciphertextOffset + offset,
                as: UInt8.self
            )
        }
        for index in 0..<4 { xor(index, stream.0 >> (8 * UInt32(index))) }
        for index in 0..<4 { xor(4 + index, stream.1 >> (8 * UInt32(index))) }
        for index in 0..<3 { xor(8 + index, stream.2 >> (8 * UInt32(index))) }
    }

    /// Builds the payload for `fields` with the epoch keys and MAC key of one account.
    static func seal(_ fields: BeaconFields, keys: EpochKeys, macKey: HMACSHA256Key) -> [UInt8] {
        precondition(fields.epoch == keys.epoch, "keys of another epoch")
        let cipher = keys.cipher
        var out = [UInt8](repeating: 0, count: BeaconFormat.payloadLength)
        out.withUnsafeMutableBytes { buffer in
            let p = buffer.baseAddress!
            p.storeBytes(of: BeaconFormat.version << 4 | fields.headerNibble, toByteOffset: 0, as: UInt8.self)
            let tag = keys.tags[Int(fields.slot)]
            p.storeBytes(of: tag.bigEndian, toByteOffset: BeaconFormat.tagOffset, as: UInt32.self)
            for index in 0..<3 {
                let byte = UInt8(truncatingIfNeeded: fields.salt >> (16 - 8 * UInt32(index)))
                p.storeBytes(of: byte, toByteOffset: BeaconFormat.saltOffset + index, as: UInt8.self)
            }
            let c = BeaconFormat.ciphertextOffset
            p.storeBytes(of: fields.typeHash.rawValue.bigEndian, toByteOffset: c, as: UInt32.self)
            p.storeBytes(of: fields.flags.rawValue, toByteOffset: c + 4, as: UInt8.self)
            p.storeBytes(of: fields.sequence.bigEndian, toByteOffset: c + 5, as: UInt16.self)
            p.storeBytes(of: fields.device.rawValue.bigEndian, toByteOffset: c + 7, as: UInt32.self)
            applyKeystream(keystream(cipher: cipher.chacha, payload: p), to: p)
            let (macWord, macByte) = mac(key: macKey, context: cipher.context, payload: p)
            p.storeBytes(of: macWord.bigEndian, toByteOffset: BeaconFormat.macOffset, as: UInt32.self)
            p.storeBytes(of: macByte, toByteOffset: BeaconFormat.macOffset + 4, as: UInt8.self)
        }
        return out
    }

    /// Checks the MAC of a 24-byte payload and, if it is right, decrypts it.
    /// Returns nil when the MAC is wrong. The tag is not checked here: the
    /// caller found `slot` by looking the tag up.
    @inline(__always)
    static func open(
        _ p: UnsafeRawPointer, cipher: EpochCipher, slot: UInt8, macKey: HMACSHA256Key
    ) -> BeaconFields? {
        let (macWord, macByte) = mac(key: macKey, context: cipher.context, payload: p)
        let receivedWord = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: BeaconFormat.macOffset, as: UInt32.self))
        let receivedByte = p.load(fromByteOffset: BeaconFormat.macOffset + 4, as: UInt8.self)
        // Constant-time comparison: no early exit on the first differing byte.
        guard (macWord ^ receivedWord) | UInt32(macByte ^ receivedByte) == 0 else { return nil }

        let stream = keystream(cipher: cipher.chacha, payload: p)
        // Plaintext byte i = ciphertext byte i XOR keystream byte i, where the
        // keystream bytes are the little-endian bytes of the three words.
        @inline(__always) func plain(_ index: Int) -> UInt32 {
            let word = index < 4 ? stream.0 : index < 8 ? stream.1 : stream.2
            let key = UInt8(truncatingIfNeeded: word >> (8 * UInt32(index & 3)))
            return UInt32(p.load(fromByteOffset: BeaconFormat.ciphertextOffset + index, as: UInt8.self) ^ key)
        }
        let typeHash = plain(0) << 24 | plain(1) << 16 | plain(2) << 8 | plain(3)
        let flags = UInt8(plain(4))
        let sequence = UInt16(plain(5) << 8 | plain(6))
        let device = plain(7) << 24 | plain(8) << 16 | plain(9) << 8 | plain(10)
        let header = p.load(fromByteOffset: 0, as: UInt8.self)
        let salt = UInt32(p.load(fromByteOffset: 5, as: UInt8.self)) << 16
            | UInt32(p.load(fromByteOffset: 6, as: UInt8.self)) << 8 | UInt32(p.load(fromByteOffset: 7, as: UInt8.self))
        return BeaconFields(
            headerNibble: header & 0x0f, epoch: cipher.epoch, slot: slot, salt: salt,
            typeHash: ActivityTypeHash(rawValue: typeHash), flags: BeaconFlags(rawValue: flags),
            sequence: sequence, device: DeviceID(rawValue: device)
        )
    }
}
