/// A validated D-Bus type signature: zero or more single complete types.
///
/// Construction checks every rule of the D-Bus specification: at most 255
/// bytes, known type codes, dict entries only as array elements with a basic
/// key, no empty structs, and at most 32 nested arrays and 32 nested structs.
public struct DBusSignature: Sendable, Hashable {
    /// The signature text, for example `sa{sv}as`.
    public let rawValue: String
    /// The single complete types that make up the signature, in order.
    public let types: [DBusType]

    /// The empty signature (a message with no arguments).
    public static let empty = DBusSignature(validated: "", types: [])

    /// Maximum length of a signature in bytes.
    public static let maximumLength = 255
    /// Maximum nesting of arrays, and separately of structs.
    public static let maximumDepth = 32

    /// Parses and validates `text`.
    /// - Throws: `DBusSignatureError` naming the offending position.
    public init(_ text: String) throws(DBusSignatureError) {
        let bytes = Array(text.utf8)
        guard bytes.count <= Self.maximumLength else { throw .tooLong(text.utf8.count) }
        var parser = SignatureParser(bytes: bytes)
        var types: [DBusType] = []
        while !parser.atEnd {
            types.append(try parser.parseCompleteType(arrayDepth: 0, structDepth: 0))
        }
        self.rawValue = text
        self.types = types
    }

    /// A signature made of the given types.
    public init(types: [DBusType]) {
        var text = ""
        for type in types { type.appendSignature(to: &text) }
        self.rawValue = text
        self.types = types
    }

    init(validated rawValue: String, types: [DBusType]) {
        self.rawValue = rawValue
        self.types = types
    }

    /// True when the signature is exactly one complete type (what a variant may hold).
    public var isSingleCompleteType: Bool { types.count == 1 }
}

extension DBusSignature: CustomStringConvertible {
    public var description: String { rawValue }
}

extension DBusSignature: ExpressibleByStringLiteral {
    /// A signature literal. A malformed literal is a programming error and traps.
    public init(stringLiteral value: String) {
        do { try self.init(value) } catch { preconditionFailure("invalid D-Bus signature literal \"\(value)\": \(error)") }
    }
}

/// Why a signature was rejected.
public enum DBusSignatureError: Error, Sendable, Equatable, CustomStringConvertible {
    case tooLong(Int)
    case unknownTypeCode(Character, at: Int)
    case unexpectedEnd
    case dictEntryOutsideArray(at: Int)
    case dictKeyNotBasic(at: Int)
    case badDictEntry(at: Int)
    case emptyStructure(at: Int)
    case unbalanced(at: Int)
    case tooDeep(at: Int)

    public var description: String {
        switch self {
        case .tooLong(let n): "signature is \(n) bytes long; the maximum is 255"
        case .unknownTypeCode(let c, let i): "unknown type code '\(c)' at offset \(i)"
        case .unexpectedEnd: "signature ends in the middle of a type"
        case .dictEntryOutsideArray(let i): "dict entry at offset \(i) is not an array element"
        case .dictKeyNotBasic(let i): "dict entry key at offset \(i) is not a basic type"
        case .badDictEntry(let i): "dict entry at offset \(i) must hold exactly a key and a value"
        case .emptyStructure(let i): "empty struct at offset \(i)"
        case .unbalanced(let i): "unbalanced bracket at offset \(i)"
        case .tooDeep(let i): "nesting deeper than 32 at offset \(i)"
        }
    }
}

/// A recursive-descent parser over signature bytes.
struct SignatureParser {
    let bytes: [UInt8]
    var index = 0

    var atEnd: Bool { index >= bytes.count }

    mutating func parseCompleteType(arrayDepth: Int, structDepth: Int) throws(DBusSignatureError) -> DBusType {
        guard index < bytes.count else { throw .unexpectedEnd }
        let start = index
        let code = bytes[index]
        index += 1
        if let basic = DBusType.basic(code: code) { return basic }
        switch code {
        case UInt8(ascii: "v"):
            return .variant
        case UInt8(ascii: "a"):
            guard arrayDepth < DBusSignature.maximumDepth else { throw .tooDeep(at: start) }
            guard index < bytes.count else { throw .unexpectedEnd }
            if bytes[index] == UInt8(ascii: "{") {
                return .array(try parseDictEntry(arrayDepth: arrayDepth + 1, structDepth: structDepth))
            }
            return .array(try parseCompleteType(arrayDepth: arrayDepth + 1, structDepth: structDepth))
        case UInt8(ascii: "("):
            guard structDepth < DBusSignature.maximumDepth else { throw .tooDeep(at: start) }
            var fields: [DBusType] = []
            while true {
                guard index < bytes.count else { throw .unexpectedEnd }
                if bytes[index] == UInt8(ascii: ")") {
                    index += 1
                    guard !fields.isEmpty else { throw .emptyStructure(at: start) }
                    return .structure(fields)
                }
                fields.append(try parseCompleteType(arrayDepth: arrayDepth, structDepth: structDepth + 1))
            }
        case UInt8(ascii: "{"):
            throw .dictEntryOutsideArray(at: start)
        case UInt8(ascii: ")"), UInt8(ascii: "}"):
            throw .unbalanced(at: start)
        default:
            throw .unknownTypeCode(Character(Unicode.Scalar(code)), at: start)
        }
    }

    /// Parses `{kv}` at the current index (the caller has checked the `{`).
    mutating func parseDictEntry(arrayDepth: Int, structDepth: Int) throws(DBusSignatureError) -> DBusType {
        let start = index
        index += 1  // "{"
        guard structDepth < DBusSignature.maximumDepth else { throw .tooDeep(at: start) }
        guard index < bytes.count else { throw .unexpectedEnd }
        let keyOffset = index
        let key = try parseCompleteType(arrayDepth: arrayDepth, structDepth: structDepth + 1)
        guard key.isBasic else { throw .dictKeyNotBasic(at: keyOffset) }
        guard index < bytes.count else { throw .unexpectedEnd }
        if bytes[index] == UInt8(ascii: "}") { throw .badDictEntry(at: start) }
        let value = try parseCompleteType(arrayDepth: arrayDepth, structDepth: structDepth + 1)
        guard index < bytes.count else { throw .unexpectedEnd }
        guard bytes[index] == UInt8(ascii: "}") else { throw .badDictEntry(at: start) }
        index += 1
        return .dictEntry(key: key, value: value)
    }
}
