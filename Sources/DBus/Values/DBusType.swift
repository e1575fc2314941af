/// A single complete D-Bus type, as the D-Bus specification defines it.
///
/// Basic types are the fixed-size numbers plus the three string-like types.
/// Container types nest: arrays, structs, dict entries (only ever inside an
/// array) and variants.
public indirect enum DBusType: Sendable, Hashable {
    case byte, boolean, int16, uint16, int32, uint32, int64, uint64, double
    case string, objectPath, signature, unixFD
    case variant
    case array(DBusType)
    case dictEntry(key: DBusType, value: DBusType)
    case structure([DBusType])

    /// The type code of this type: the character that starts its signature.
    public var code: Character {
        switch self {
        case .byte: "y"
        case .boolean: "b"
        case .int16: "n"
        case .uint16: "q"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .objectPath: "o"
        case .signature: "g"
        case .unixFD: "h"
        case .variant: "v"
        case .array: "a"
        case .dictEntry: "{"
        case .structure: "("
        }
    }

    /// `code` as its ASCII byte, for the decoder's hot path (a `Character`'s
    /// `asciiValue` goes through the string machinery).
    var codeByte: UInt8 {
        switch self {
        case .byte: UInt8(ascii: "y")
        case .boolean: UInt8(ascii: "b")
        case .int16: UInt8(ascii: "n")
        case .uint16: UInt8(ascii: "q")
        case .int32: UInt8(ascii: "i")
        case .uint32: UInt8(ascii: "u")
        case .int64: UInt8(ascii: "x")
        case .uint64: UInt8(ascii: "t")
        case .double: UInt8(ascii: "d")
        case .string: UInt8(ascii: "s")
        case .objectPath: UInt8(ascii: "o")
        case .signature: UInt8(ascii: "g")
        case .unixFD: UInt8(ascii: "h")
        case .variant: UInt8(ascii: "v")
        case .array: UInt8(ascii: "a")
        case .dictEntry: UInt8(ascii: "{")
        case .structure: UInt8(ascii: "(")
        }
    }

    /// True for the types that may be dict-entry keys: every type that is not a container.
    public var isBasic: Bool {
        switch self {
        case .variant, .array, .dictEntry, .structure: false
        default: true
        }
    }

    /// True for the basic types of fixed size (every basic type but the string-like ones).
    public var isFixedSize: Bool {
        switch self {
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double, .unixFD: true
        default: false
        }
    }

    /// The signature of this one type, for example `a{sv}`.
    public var signature: String {
        var out = ""
        appendSignature(to: &out)
        return out
    }

    func appendSignature(to out: inout String) {
        switch self {
        case .array(let element):
            out.append("a")
            element.appendSignature(to: &out)
        case .dictEntry(let key, let value):
            out.append("{")
            key.appendSignature(to: &out)
            value.appendSignature(to: &out)
            out.append("}")
        case .structure(let fields):
            out.append("(")
            for field in fields { field.appendSignature(to: &out) }
            out.append(")")
        default:
            out.append(code)
        }
    }

    /// The basic type whose code is `code`, or nil.
    static func basic(code: UInt8) -> DBusType? {
        switch code {
        case UInt8(ascii: "y"): .byte
        case UInt8(ascii: "b"): .boolean
        case UInt8(ascii: "n"): .int16
        case UInt8(ascii: "q"): .uint16
        case UInt8(ascii: "i"): .int32
        case UInt8(ascii: "u"): .uint32
        case UInt8(ascii: "x"): .int64
        case UInt8(ascii: "t"): .uint64
        case UInt8(ascii: "d"): .double
        case UInt8(ascii: "s"): .string
        case UInt8(ascii: "o"): .objectPath
        case UInt8(ascii: "g"): .signature
        case UInt8(ascii: "h"): .unixFD
        default: nil
        }
    }
}

extension DBusType: CustomStringConvertible {
    public var description: String { signature }
}
