#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A Swift type with a fixed D-Bus type that converts to and from `DBusValue`.
///
/// Conformances exist for the integer types, `Bool`, `Double`, `String`,
/// `DBusObjectPath`, `DBusSignature`, `DBusUnixFD`, arrays, dictionaries and
/// `DBusValue` itself (which stands for "any value", sent as a variant, so that
/// `[String: DBusValue]` is an `a{sv}`).
public protocol DBusCodable: Sendable {
    /// The D-Bus type of every value of this Swift type.
    static var dbusType: DBusType { get }
    /// This value as a D-Bus value of type `dbusType`.
    var dbusValue: DBusValue { get }
    /// Converts a received value.
    /// - Throws: `DBusDecodingError` when `value` has another type or is out of range.
    init(dbusValue value: DBusValue) throws(DBusDecodingError)
}

extension DBusCodable {
    static func mismatch(_ value: DBusValue) -> DBusDecodingError {
        .typeMismatch(expected: dbusType.signature, actual: value.type.signature, context: "")
    }
}

extension UInt8: DBusCodable {
    public static var dbusType: DBusType { .byte }
    public var dbusValue: DBusValue { .byte(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .byte(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Bool: DBusCodable {
    public static var dbusType: DBusType { .boolean }
    public var dbusValue: DBusValue { .boolean(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .boolean(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Int16: DBusCodable {
    public static var dbusType: DBusType { .int16 }
    public var dbusValue: DBusValue { .int16(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .int16(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension UInt16: DBusCodable {
    public static var dbusType: DBusType { .uint16 }
    public var dbusValue: DBusValue { .uint16(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .uint16(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Int32: DBusCodable {
    public static var dbusType: DBusType { .int32 }
    public var dbusValue: DBusValue { .int32(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .int32(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension UInt32: DBusCodable {
    public static var dbusType: DBusType { .uint32 }
    public var dbusValue: DBusValue { .uint32(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .uint32(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Int64: DBusCodable {
    public static var dbusType: DBusType { .int64 }
    public var dbusValue: DBusValue { .int64(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .int64(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension UInt64: DBusCodable {
    public static var dbusType: DBusType { .uint64 }
    public var dbusValue: DBusValue { .uint64(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .uint64(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension Double: DBusCodable {
    public static var dbusType: DBusType { .double }
    public var dbusValue: DBusValue { .double(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .double(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension String: DBusCodable {
    public static var dbusType: DBusType { .string }
    public var dbusValue: DBusValue { .string(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .string(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension DBusObjectPath: DBusCodable {
    public static var dbusType: DBusType { .objectPath }
    public var dbusValue: DBusValue { .objectPath(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .objectPath(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension DBusSignature: DBusCodable {
    public static var dbusType: DBusType { .signature }
    public var dbusValue: DBusValue { .signature(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .signature(let v) = value else { throw Self.mismatch(value) }
        self = v
    }
}

extension DBusUnixFD: DBusCodable {
    public static var dbusType: DBusType { .unixFD }
    public var dbusValue: DBusValue { .unixFD(self) }
    /// Duplicates the received descriptor, so the new object owns its own copy.
    public convenience init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .unixFD(let v) = value else { throw Self.mismatch(value) }
        let copy = fcntl(v.fileDescriptor, F_DUPFD_CLOEXEC, 0)
        guard copy >= 0 else { throw .invalidValue("cannot duplicate received file descriptor \(v.fileDescriptor)") }
        self.init(taking: copy)
    }
}

/// `DBusValue` as a Swift type means "any value": it travels as a variant.
extension DBusValue: DBusCodable {
    public static var dbusType: DBusType { .variant }
    public var dbusValue: DBusValue { .variant(self) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .variant(let inner) = value else {
            throw .typeMismatch(expected: "v", actual: value.type.signature, context: "")
        }
        self = inner
    }
}

extension Array: DBusCodable where Element: DBusCodable {
    public static var dbusType: DBusType { .array(Element.dbusType) }
    public var dbusValue: DBusValue { .array(element: Element.dbusType, map(\.dbusValue)) }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .array(let element, let elements) = value, element == Element.dbusType else {
            throw Self.mismatch(value)
        }
        var out: [Element] = []
        out.reserveCapacity(elements.count)
        for e in elements { out.append(try Element(dbusValue: e)) }
        self = out
    }
}

extension Dictionary: DBusCodable where Key: DBusCodable, Value: DBusCodable {
    public static var dbusType: DBusType { .array(.dictEntry(key: Key.dbusType, value: Value.dbusType)) }
    public var dbusValue: DBusValue {
        .array(
            element: .dictEntry(key: Key.dbusType, value: Value.dbusType),
            map { .dictEntry($0.key.dbusValue, $0.value.dbusValue) })
    }
    public init(dbusValue value: DBusValue) throws(DBusDecodingError) {
        guard case .array(let element, let elements) = value,
            element == .dictEntry(key: Key.dbusType, value: Value.dbusType)
        else { throw Self.mismatch(value) }
        var out: [Key: Value] = [:]
        out.reserveCapacity(elements.count)
        for case .dictEntry(let k, let v) in elements {
            out[try Key(dbusValue: k)] = try Value(dbusValue: v)
        }
        self = out
    }
}

// MARK: - Typed access to `a{sv}` maps

extension Dictionary where Key == String, Value == DBusValue {
    /// The value under `key` converted to `T`.
    /// - Throws: `DBusDecodingError.missingKey` or `.typeMismatch` naming the key.
    public func require<T: DBusCodable>(_ key: String, as type: T.Type = T.self) throws(DBusDecodingError) -> T {
        guard let value = self[key] else { throw .missingKey(key) }
        return try Self.convert(value, key: key)
    }

    /// The value under `key` converted to `T`, or nil when the key is absent.
    /// - Throws: `DBusDecodingError.typeMismatch` when present with another type.
    public func optional<T: DBusCodable>(_ key: String, as type: T.Type = T.self) throws(DBusDecodingError) -> T? {
        guard let value = self[key] else { return nil }
        return try Self.convert(value, key: key)
    }

    private static func convert<T: DBusCodable>(_ value: DBusValue, key: String) throws(DBusDecodingError) -> T {
        do { return try T(dbusValue: value) } catch {
            if case .typeMismatch(let expected, let actual, _) = error {
                throw .typeMismatch(expected: expected, actual: actual, context: "key '\(key)'")
            }
            throw error
        }
    }
}
