/// A human-transferable export code for an account key: read it aloud or
/// type it on the other device (docs/beacon-format.md, section 11).
///
/// 56 Crockford base32 symbols in groups of four, like
/// `2000-G40R-…`: one version symbol (`2`), 52 symbols carrying the 256-bit
/// secret (then 4 zero pad bits), and 3 check symbols: a CRC-15 of the first
/// 53 symbols with the generator polynomial
/// x¹⁵ + x¹³ + x¹¹ + x¹⁰ + x⁵ + x⁴ + x³ + x² + x + 1.
///
/// The check detects every error confined to at most two symbols anywhere in
/// the code (so every single-symbol substitution and every swap of two
/// symbols), every error confined to three consecutive symbols, and every
/// error that flips an odd number of bits; other errors escape it with
/// probability about 2⁻¹⁵.
///
/// Accepted input, exactly: the symbols `0-9`, `A-Z` and `a-z` except `U`/`u`,
/// with `I`, `i`, `L`, `l` read as 1 and `O`, `o` as 0; separators (ignored
/// anywhere) U+0020 space, U+002D hyphen-minus, U+0009 tab, U+000A line feed
/// and U+000D carriage return. Anything else is refused. A code that decodes
/// has exactly one canonical form, `encode`'s output (`canonical(_:)`).
public enum AccountKeyCode {
    /// The version symbol's value this build writes and reads.
    public static let version: UInt8 = 2
    /// The version of the codes written before the CRC check; refused.
    public static let retiredVersion: UInt8 = 1
    /// Number of symbols, without separators.
    public static let symbolCount = 56
    /// Symbols per group in the printed form.
    public static let groupLength = 4

    /// The CRC-15 generator without its x¹⁵ term: x¹³ + x¹¹ + x¹⁰ + x⁵ + x⁴ + x³ + x² + x + 1.
    static let polynomial: UInt32 = 0x2C3F
    /// Version symbol plus 52 secret symbols: what the check covers.
    static let dataSymbols = 53
    /// The retired version-1 weighted-sum check's modulus.
    static let retiredPrime = 32749

    /// The export code of `key`'s secret, in its canonical form: 14 groups of
    /// 4 upper-case symbols joined by `-`.
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
        symbols += checkSymbols(symbols)
        let text = render(symbols)
        for index in symbols.indices { symbols[index] = 0 }
        return text
    }

    /// Reads an export code and creates the account key under `name`.
    /// - Throws: `AccountKeyCodeError`; a typo gives `.checksumMismatch`.
    public static func decode(_ code: String, name: String) throws(AccountKeyCodeError) -> AccountKey {
        var secret = try secret(from: code)
        defer { for index in secret.indices { secret[index] = 0 } }
        do {
            return try AccountKey(name: name, secret: secret)
        } catch {
            throw .invalidName(error)
        }
    }

    /// The canonical form of a code that decodes (what `encode` writes for
    /// its secret): the accepted input variations (case, I/L/O, separators)
    /// all map to it.
    /// - Throws: `AccountKeyCodeError`, as `decode` would.
    public static func canonical(_ code: String) throws(AccountKeyCodeError) -> String {
        var symbols = try symbols(of: code)
        defer { for index in symbols.indices { symbols[index] = 0 } }
        _ = try verified(symbols)
        return render(symbols)
    }

    /// The 32-byte secret carried by a code.
    static func secret(from code: String) throws(AccountKeyCodeError) -> [UInt8] {
        var symbols = try symbols(of: code)
        defer { for index in symbols.indices { symbols[index] = 0 } }
        return try verified(symbols)
    }

    /// The symbol values of a code's text: separators dropped, substitutions
    /// applied, the count checked. Positions in errors count Unicode scalars from 1.
    static func symbols(of code: String) throws(AccountKeyCodeError) -> [UInt8] {
        var symbols: [UInt8] = []
        symbols.reserveCapacity(symbolCount)
        var position = 0
        for scalar in code.unicodeScalars {
            position += 1
            switch scalar {
            case " ", "-", "\t", "\n", "\r": continue
            default: break
            }
            guard let value = CrockfordBase32.value(of: scalar) else {
                throw .invalidCharacter(Character(scalar), position: position)
            }
            symbols.append(value)
        }
        guard symbols.count == symbolCount else { throw .wrongLength(symbols.count) }
        return symbols
    }

    /// Checks 56 symbol values, in the documented order, and returns the secret.
    static func verified(_ symbols: [UInt8]) throws(AccountKeyCodeError) -> [UInt8] {
        precondition(symbols.count == symbolCount)
        guard checkSymbols(symbols[..<dataSymbols]) == Array(symbols[dataSymbols...]) else {
            // A version-1 code (older handoff) is named as such rather than called a typo.
            if symbols[0] == retiredVersion, passesRetiredCheck(symbols) { throw .unsupportedVersion(retiredVersion) }
            throw .checksumMismatch
        }
        guard symbols[0] == version else { throw .unsupportedVersion(symbols[0]) }
        guard symbols[dataSymbols - 1] & 0x0f == 0 else { throw .nonZeroPadding }

        var secret: [UInt8] = []
        secret.reserveCapacity(AccountKey.secretByteCount)
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

    /// The CRC-15 of `symbols` (5 bits each, most significant first): the
    /// remainder of M(x)·x¹⁵ divided by the generator, register starting at 0.
    static func crc(_ symbols: some Sequence<UInt8>) -> UInt32 {
        var register: UInt32 = 0
        for symbol in symbols {
            for bit in (0..<5).reversed() {
                let feedback = (register >> 14 ^ UInt32(symbol) >> UInt32(bit)) & 1
                register = (register << 1) & 0x7fff
                if feedback == 1 { register ^= polynomial }
            }
        }
        return register
    }

    /// The three check symbols of the data symbols: the CRC's 15 bits, most significant first.
    static func checkSymbols(_ data: some Sequence<UInt8>) -> [UInt8] {
        let value = crc(data)
        return [UInt8(value >> 10), UInt8(value >> 5 & 0x1f), UInt8(value & 0x1f)]
    }

    /// Whether 56 symbols satisfy the retired version-1 check:
    /// Σ (i+2)·sᵢ over symbols 0–52, plus T = 1024·s₅₃ + 32·s₅₄ + s₅₅ with
    /// T < 32749, is 0 modulo 32749. Only used to name such a code's version.
    static func passesRetiredCheck(_ symbols: [UInt8]) -> Bool {
        let sum = symbols[..<dataSymbols].enumerated().reduce(0) { $0 + ($1.offset + 2) * Int($1.element) }
        let check = Int(symbols[53]) * 1024 + Int(symbols[54]) * 32 + Int(symbols[55])
        return check < retiredPrime && (sum + check) % retiredPrime == 0
    }

    /// Symbols as canonical text: upper case, groups of four joined by `-`.
    private static func render(_ symbols: [UInt8]) -> String {
        var text = ""
        text.reserveCapacity(symbols.count + symbols.count / groupLength)
        for (index, symbol) in symbols.enumerated() {
            if index > 0, index % groupLength == 0 { text += "-" }
            text.append(CrockfordBase32.alphabet[Int(symbol)])
        }
        return text
    }
}
