/// The beacon's two cryptographic operations on a raw 24-byte payload.
enum BeaconCrypto {
    /// The 5-byte MAC over `context ‖ payload[0..<19]` (31 bytes): the first
    /// 4 bytes of HMAC-SHA256 (big-endian) and its fifth byte.
    @inline(__always)
    static func mac(key: HMACKey, context: EpochContext, payload p: UnsafeRawPointer) -> (UInt32, UInt8) {
        // The 31-byte message, assembled on the stack.
        var message: (UInt64, UInt64, UInt64, UInt64) = (0, 0, 0, 0)
        return withUnsafeMutableBytes(of: &message) { buffer in
            context.write(to: buffer.baseAddress!)
            (buffer.baseAddress! + EpochContext.byteCount).copyMemory(from: p, byteCount: BeaconFormat.macOffset)
            let message = UnsafeRawBufferPointer(rebasing: buffer[0..<(EpochContext.byteCount + BeaconFormat.macOffset)])
            return key.authenticationCode(for: message).withUnsafeBytes { code in
                (UInt32(bigEndian: code.loadUnaligned(as: UInt32.self)), code[4])
            }
        }
    }

    /// XORs the 11 keystream bytes into `payload[8..<19]`: ChaCha20 with
    /// nonce `payload[0..<8] ‖ 00 00 00 00` and block counter 0.
    @inline(__always)
    static func applyKeystream(cipher: ChaCha20StreamKey, to p: UnsafeMutableRawPointer) {
        cipher.apply(nonce: p, to: p + BeaconFormat.ciphertextOffset, count: BeaconFormat.ciphertextLength)
    }

    /// Builds the payload for `fields` with the epoch keys and MAC key of one account.
    static func seal(_ fields: BeaconFields, keys: EpochKeys, macKey: HMACKey) -> [UInt8] {
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
            applyKeystream(cipher: cipher.chacha, to: p)
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
        _ p: UnsafeRawPointer, cipher: EpochCipher, slot: UInt8, macKey: HMACKey
    ) -> BeaconFields? {
        let (macWord, macByte) = mac(key: macKey, context: cipher.context, payload: p)
        let receivedWord = UInt32(bigEndian: p.loadUnaligned(fromByteOffset: BeaconFormat.macOffset, as: UInt32.self))
        let receivedByte = p.load(fromByteOffset: BeaconFormat.macOffset + 4, as: UInt8.self)
        // Constant-time comparison: no early exit on the first differing byte.
        guard (macWord ^ receivedWord) | UInt32(macByte ^ receivedByte) == 0 else { return nil }

        // Decrypt a copy of the first 19 bytes on the stack: the nonce and the ciphertext.
        var copy: (UInt64, UInt64, UInt64) = (0, 0, 0)
        return withUnsafeMutableBytes(of: &copy) { buffer in
            let q = buffer.baseAddress!
            q.copyMemory(from: p, byteCount: BeaconFormat.macOffset)
            applyKeystream(cipher: cipher.chacha, to: q)
            let c = BeaconFormat.ciphertextOffset
            let typeHash = UInt32(bigEndian: q.loadUnaligned(fromByteOffset: c, as: UInt32.self))
            let flags = q.load(fromByteOffset: c + 4, as: UInt8.self)
            let sequence = UInt16(bigEndian: q.loadUnaligned(fromByteOffset: c + 5, as: UInt16.self))
            let device = UInt32(bigEndian: q.loadUnaligned(fromByteOffset: c + 7, as: UInt32.self))
            let header = q.load(fromByteOffset: BeaconFormat.headerOffset, as: UInt8.self)
            let s = BeaconFormat.saltOffset
            let salt = UInt32(q.load(fromByteOffset: s, as: UInt8.self)) << 16
                | UInt32(q.load(fromByteOffset: s + 1, as: UInt8.self)) << 8
                | UInt32(q.load(fromByteOffset: s + 2, as: UInt8.self))
            return BeaconFields(
                headerNibble: header & 0x0f, epoch: cipher.epoch, slot: slot, salt: salt,
                typeHash: ActivityTypeHash(rawValue: typeHash), flags: BeaconFlags(rawValue: flags),
                sequence: sequence, device: DeviceID(rawValue: device)
            )
        }
    }
}
