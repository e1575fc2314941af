/// One D-Bus value of any type.
///
/// Arrays carry their element type so that an empty array still has a
/// signature. A dictionary is an array of `dictEntry` values, exactly as on the
/// wire; `DBusValue.dictionary(_:)` builds one from Swift pairs.
public enum DBusValue: Sendable, Hashable {
    case byte(UInt8)
    case boolean(Bool)
    case int16(Int16)
    case uint16(UInt16)
    case int32(Int32)
    case uint32(UInt32)
    case int64(Int64)
    case uint64(UInt64)
    case double(Double)
    case string(String)
    case objectPath(DBusObjectPath)
    case signature(DBusSignature)
    case unixFD(DBusUnixFD)
    /// An array whose elements all have type `element`.
    case array(element: DBusType, [DBusValue])
    /// A struct: one or more fields.
    case structure([DBusValue])
    /// A key–value pair; valid only as an array element.
    indirect case dictEntry(DBusValue, DBusValue)
    /// A value together with its own type.
    indirect case variant(DBusValue)

    /// The type of this value.
    public var type: DBusType {
        switch self {
        case .byte: .byte
        case .boolean: .boolean
        case .int16: .int16
        case .uint16: .uint16
        case .int32: .int32
        case .uint32: .uint32
        case .int64: .int64
        case .uint64: .uint64
        case .double: .double
        case .string: .string
        case .objectPath: .objectPath
        case .signature: .signature
        case .unixFD: .unixFD
        case .array(let element, _): .array(element)
        case .structure(let fields): .structure(fields.map(\.type))
        case .dictEntry(let key, let value): .dictEntry(key: key.type, value: value.type)
        case .variant: .variant
        }
    }

    /// A dictionary (`a{kv}`) of the given key and value types.
    public static func dictionary(key: DBusType, value: DBusType, _ entries: [(DBusValue, DBusValue)]) -> DBusValue {
        .array(element: .dictEntry(key: key, value: value), entries.map { .dictEntry($0.0, $0.1) })
    }

    /// An `a{sv}` dictionary, the usual shape of D-Bus property maps. Keys are sorted,
    /// so the encoding is deterministic.
    public static func vardict(_ entries: [String: DBusValue]) -> DBusValue {
        .array(
            element: .dictEntry(key: .string, value: .variant),
            entries.sorted { $0.key < $1.key }.map { .dictEntry(.string($0.key), .variant($0.value)) }
        )
    }

    /// A byte array (`ay`).
    public static func bytes(_ bytes: some Sequence<UInt8>) -> DBusValue {
        .array(element: .byte, bytes.map(DBusValue.byte))
    }

    /// A string array (`as`).
    public static func strings(_ strings: [String]) -> DBusValue {
        .array(element: .string, strings.map(DBusValue.string))
    }
}

// MARK: - Reading values

extension DBusValue {
    /// The value inside any number of variant wrappers.
    public var unwrapped: DBusValue {
        var value = self
        while case .variant(let inner) = value { value = inner }
        return value
    }

    /// The string, when this is a string, object path or signature.
    public var string: String? {
        switch unwrapped {
        case .string(let s): s
        case .objectPath(let p): p.rawValue
        case .signature(let g): g.rawValue
        default: nil
        }
    }

    /// The bytes, when this is an `ay`.
    public var bytes: [UInt8]? {
        guard case .array(.byte, let elements) = unwrapped else { return nil }
        var out = [UInt8]()
        out.reserveCapacity(elements.count)
        for case .byte(let b) in elements { out.append(b) }
        return out
    }

    /// The elements, when this is an array.
    public var arrayElements: [DBusValue]? {
        guard case .array(_, let elements) = unwrapped else { return nil }
        return elements
    }

    /// The entries, when this is a dictionary; on duplicate keys the last one wins.
    public var dictionaryEntries: [(key: DBusValue, value: DBusValue)]? {
        guard case .array(.dictEntry, let elements) = unwrapped else { return nil }
        return elements.compactMap {
            guard case .dictEntry(let k, let v) = $0 else { return nil }
            return (k, v)
        }
    }

    /// An `a{sv}` as a Swift dictionary of the variants' contents.
    public var vardict: [String: DBusValue]? {
        guard case .array(.dictEntry, let elements) = unwrapped else { return nil }
        var out: [String: DBusValue] = [:]
        out.reserveCapacity(elements.count)
        for element in elements {
            guard case .dictEntry(let key, let value) = element else { continue }
            guard case .string(let k) = key else { return nil }
            if case .variant(let inner) = value { out[k] = inner } else { out[k] = value }
        }
        return out
    }

    /// The value as a signed integer, for any integer type.
    public var integer: Int64? {
        switch unwrapped {
        case .byte(let v): Int64(v)
        case .int16(let v): Int64(v)
        case .uint16(let v): Int64(v)
        case .int32(let v): Int64(v)
        case .uint32(let v): Int64(v)
        case .int64(let v): v
        case .uint64(let v): Int64(exactly: v)
        default: nil
        }
    }

    /// The value, when it is a boolean.
    public var boolean: Bool? {
        if case .boolean(let b) = unwrapped { return b }
        return nil
    }
}

// MARK: - Checking values before they reach libdbus

extension DBusValue {
    /// Maximum container nesting of a value (arrays, structs, dict entries and variants together).
    public static let maximumNesting = 64

    /// Checks that the value can be marshalled: array elements match the declared
    /// element type, dict-entry keys are basic, strings hold no NUL, and nesting
    /// stays within `maximumNesting`.
    /// - Throws: `DBusError.invalidArgs` describing the first problem.
    public func validate() throws(DBusError) {
        // A dict entry exists only as an array element. On its own (a message
        // argument, say) libdbus writes it without complaint, and the bus then
        // drops the whole connection for sending an invalid message.
        if case .dictEntry = self {
            throw DBusError(.invalidArgs, "a dict entry can only be an array element")
        }
        try Self.checkSignature(of: type)
        try validate(depth: 0)
    }

    /// Checks that `type` written out is a valid signature: at most 255 bytes, and
    /// at most 32 nested arrays and 32 nested structs. libdbus aborts the process
    /// on a variant whose contents break these rules, and sends a struct that
    /// breaks them, which makes the bus drop the connection.
    private static func checkSignature(of type: DBusType) throws(DBusError) {
        let text = type.signature
        do { _ = try DBusSignature(text) } catch {
            throw DBusError(.invalidArgs, "type '\(text.prefix(40))\(text.count > 40 ? "…" : "")': \(error)")
        }
    }

    private func validate(depth: Int) throws(DBusError) {
        guard depth <= DBusValue.maximumNesting else {
            throw DBusError(.invalidArgs, "value nests containers more than \(DBusValue.maximumNesting) deep")
        }
        switch self {
        case .string(let s):
            guard DBusNames.isValidString(s) else {
                throw DBusError(.invalidArgs, "a D-Bus string cannot contain a NUL character")
            }
        case .array(let element, let elements):
            if case .dictEntry(let key, _) = element, !key.isBasic {
                throw DBusError(.invalidArgs, "dict key type '\(key.signature)' is not basic")
            }
            do { _ = try DBusSignature(DBusType.array(element).signature) } catch {
                throw DBusError(.invalidArgs, "array type 'a\(element.signature)': \(error)")
            }
            for value in elements {
                guard value.type == element else {
                    throw DBusError(
                        .invalidArgs,
                        "array of '\(element.signature)' holds an element of type '\(value.type.signature)'")
                }
                try value.validate(depth: depth + 1)
            }
        case .structure(let fields):
            guard !fields.isEmpty else { throw DBusError(.invalidArgs, "a struct needs at least one field") }
            for field in fields {
                if case .dictEntry = field { throw DBusError(.invalidArgs, "a dict entry cannot be a struct field") }
                try field.validate(depth: depth + 1)
            }
        case .dictEntry(let key, let value):
            guard key.type.isBasic else { throw DBusError(.invalidArgs, "dict key of type '\(key.type)' is not basic") }
            try key.validate(depth: depth + 1)
            try value.validate(depth: depth + 1)
        case .variant(let inner):
            if case .dictEntry = inner { throw DBusError(.invalidArgs, "a variant cannot hold a bare dict entry") }
            try Self.checkSignature(of: inner.type)
            try inner.validate(depth: depth + 1)
        default:
            break
        }
    }
}

// MARK: - Literals

extension DBusValue: ExpressibleByStringLiteral {
    public init(stringLiteral value: String) { self = .string(value) }
}

extension DBusValue: ExpressibleByBooleanLiteral {
    public init(booleanLiteral value: Bool) { self = .boolean(value) }
}

extension DBusValue: CustomStringConvertible {
    public var description: String {
        switch self {
        case .byte(let v): "byte \(v)"
        case .boolean(let v): "\(v)"
        case .int16(let v): "int16 \(v)"
        case .uint16(let v): "uint16 \(v)"
        case .int32(let v): "int32 \(v)"
        case .uint32(let v): "uint32 \(v)"
        case .int64(let v): "int64 \(v)"
        case .uint64(let v): "uint64 \(v)"
        case .double(let v): "double \(v)"
        case .string(let v): "\"\(v)\""
        case .objectPath(let v): "objpath \(v)"
        case .signature(let v): "signature \(v)"
        case .unixFD(let v): "fd \(v.fileDescriptor)"
        case .array(let element, let values): "a\(element.signature)[\(values.map(\.description).joined(separator: ", "))]"
        case .structure(let fields): "(\(fields.map(\.description).joined(separator: ", ")))"
        case .dictEntry(let k, let v): "\(k): \(v)"
        case .variant(let v): "<\(v)>"
        }
    }
}
