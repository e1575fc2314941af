/// A human-transferable export code for an account key: read it aloud or
/// type it on the other device.
///
/// 56 Crockford base32 symbols in groups of four, like
/// `1000-G40R-40M3-0E20-9194-ADHF-...`: one version symbol (`1`), 52 symbols
/// carrying the 256-bit secret (4 zero pad bits), and 3 check symbols. The
/// name travels separately (the importing user types it).
///
/// The check makes the weighted sum of all symbols zero modulo the prime
/// 32749 (data weights 2, 3, …, 54; check weights 1024, 32, 1), which detects
/// every single-symbol substitution and every swap of two adjacent symbols,
/// and misses a random error with probability about 1/32749. Input is
/// case-insensitive, ignores spaces and dashes, and reads I and L as 1, O as 0.
public enum AccountKeyCode {
    /// The version symbol's value.
    public static let version: UInt8 = 1
    /// Number of symbols, without separators.
    public static let symbolCount = 56
    /// Symbols per group in the printed form.
    public static let groupLength = 4

    static let prime = 32749
    private static let dataSymbols = 53

    /// The export code of `key`'s secret.
    public static func encode(_ key: AccountKey) -> String {
        var symbols: [UInt8] = [version]
        key.withSecretBytes { secret in
            var buffer: UInt32 = 0
            var bits = 0
            for byte in secret {
                buffer = buffer << 8 | UInt32(byte)
                bits += 8
                while bits >= 5 {
                    bits -= 5
                    symbols.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)) & 0x1f)
                }
            }
            symbols.append(UInt8(truncatingIfNeeded: buffer << UInt32(5 - bits)) & 0x1f)  // 1 bit + 4 zero pad bits
        }
        let check = (prime - weightedSum(symbols) % prime) % prime
        symbols += [UInt8(check / 1024), UInt8(check / 32 % 32), UInt8(check % 32)]
        var text = ""
        for (index, symbol) in symbols.enumerated() {
            if index > 0, index % groupLength == 0 { text += "-" }
            text.append(CrockfordBase32.alphabet[Int(symbol)])
        }
        return text
    }

    /// Reads an export code and creates the account key under `name`.
    /// - Throws: `AccountKeyCodeError`; a typo gives `.checksumMismatch`.
    public static func decode(_ code: String, name: String) throws(AccountKeyCodeError) -> AccountKey {
        let secret = try secret(from: code)
        do {
            return try AccountKey(name: name, secret: secret)
        } catch {
            throw .invalidName(error)
        }
    }

    /// The 32-byte secret carried by a code.
    static func secret(from code: String) throws(AccountKeyCodeError) -> [UInt8] {
        var symbols: [UInt8] = []
        var position = 0
        for character in code {
            position += 1
            if character == "-" || character.isWhitespace { continue }
            guard let value = CrockfordBase32.value(of: character) else {
                throw .invalidCharacter(character, position: position)
            }
            symbols.append(value)
        }
        guard symbols.count == symbolCount else { throw .wrongLength(symbols.count) }
        let checkValue = Int(symbols[53]) * 1024 + Int(symbols[54]) * 32 + Int(symbols[55])
        guard (weightedSum(Array(symbols[..<dataSymbols])) + checkValue) % prime == 0 else { throw .checksumMismatch }
        guard symbols[0] == version else { throw .unsupportedVersion(symbols[0]) }
        guard symbols[52] & 0x0f == 0 else { throw .nonZeroPadding }

        var secret: [UInt8] = []
        var buffer: UInt32 = 0
        var bits = 0
        for symbol in symbols[1..<dataSymbols] {
            buffer = buffer << 5 | UInt32(symbol)
            bits += 5
            if bits >= 8 {
                bits -= 8
                secret.append(UInt8(truncatingIfNeeded: buffer >> UInt32(bits)))
            }
        }
        return secret
    }

    /// Sum of symbol × (position + 2) over the data symbols.
    private static func weightedSum(_ symbols: [UInt8]) -> Int {
        symbols.enumerated().reduce(0) { $0 + ($1.offset + 2) * Int($1.element) }
    }
}
