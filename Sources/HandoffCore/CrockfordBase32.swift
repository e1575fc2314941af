/// Crockford's base32 alphabet: digits and letters without I, L, O and U.
enum CrockfordBase32 {
    /// Symbol for each 5-bit value.
    static let alphabet = Array("0123456789ABCDEFGHJKMNPQRSTVWXYZ")

    /// The 5-bit value of a typed scalar: `0-9`, `A-Z`, `a-z` except `U`/`u`,
    /// with `I`, `i`, `L`, `l` read as 1 and `O`, `o` as 0 (the usual
    /// misreadings); nil for anything else, including every non-ASCII scalar.
    static func value(of scalar: Unicode.Scalar) -> UInt8? {
        guard scalar.isASCII else { return nil }
        let ascii = UInt8(scalar.value)
        switch ascii {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): return ascii - UInt8(ascii: "0")
        case UInt8(ascii: "o"), UInt8(ascii: "O"): return 0
        case UInt8(ascii: "i"), UInt8(ascii: "I"), UInt8(ascii: "l"), UInt8(ascii: "L"): return 1
        default:
            let upper = ascii >= UInt8(ascii: "a") && ascii <= UInt8(ascii: "z") ? ascii - 32 : ascii
            return alphabet.firstIndex(of: Character(Unicode.Scalar(upper))).map(UInt8.init)
        }
    }
}
