#if canImport(Glibc)
import Glibc
#endif
/// A validated D-Bus object path, such as `/org/bluez/hci0`.
///
/// A path starts with `/`, its elements are non-empty runs of `[A-Za-z0-9_]`
/// separated by single slashes, and only the root path `/` ends in a slash.
public struct DBusObjectPath: Sendable, Hashable, Comparable {
    /// The path text.
    public let rawValue: String

    /// The root path `/`.
    public static let root = DBusObjectPath(validated: "/")

    /// Validates `text` as an object path.
    /// - Throws: `DBusError.invalidArgs` describing the problem.
    public init(_ text: String) throws(DBusError) {
        guard DBusObjectPath.isValid(text) else {
            throw DBusError(.invalidArgs, "'\(text)' is not a valid D-Bus object path")
        }
        self.rawValue = text
    }

    init(validated text: String) { self.rawValue = text }

    /// True when `text` follows the object-path rules.
    public static func isValid(_ text: String) -> Bool {
        let bytes = text.utf8
        guard let first = bytes.first, first == UInt8(ascii: "/") else { return false }
        if bytes.count == 1 { return true }
        var previousWasSlash = true
        for byte in bytes.dropFirst() {
            if byte == UInt8(ascii: "/") {
                if previousWasSlash { return false }
                previousWasSlash = true
            } else if DBusNames.isPathElementByte(byte) {
                previousWasSlash = false
            } else {
                return false
            }
        }
        return !previousWasSlash
    }

    /// The path's elements: `/org/bluez` gives `["org", "bluez"]`.
    public var elements: [Substring] {
        rawValue.split(separator: "/")
    }

    /// The path one element longer: `/org` appending `bluez` gives `/org/bluez`.
    /// - Throws: `DBusError.invalidArgs` when `element` is not a valid path element.
    public func appending(_ element: String) throws(DBusError) -> DBusObjectPath {
        // One element only: "a/b" would make a valid path, but not one element longer.
        guard !element.isEmpty, element.utf8.allSatisfy(DBusNames.isPathElementByte) else {
            throw DBusError(.invalidArgs, "'\(element)' is not a valid D-Bus object path element")
        }
        return DBusObjectPath(validated: rawValue == "/" ? "/" + element : rawValue + "/" + element)
    }

    /// The object one level up: `/a/b` for `/a/b/c`, `/` for `/a` and for `/` itself.
    public var parent: DBusObjectPath {
        guard let slash = rawValue.lastIndex(of: "/"), slash != rawValue.startIndex else { return "/" }
        return DBusObjectPath(validated: String(rawValue[..<slash]))
    }

    /// True when `self` lies strictly below `ancestor` in the tree.
    public func isDescendant(of ancestor: DBusObjectPath) -> Bool {
        if ancestor.rawValue == "/" { return rawValue != "/" }
        // Byte by byte, without building "ancestor/": this runs per advertisement.
        let fast = rawValue.utf8.withContiguousStorageIfAvailable { path in
            ancestor.rawValue.utf8.withContiguousStorageIfAvailable { prefix in
                path.count > prefix.count && path[prefix.count] == UInt8(ascii: "/")
                    && memcmp(path.baseAddress!, prefix.baseAddress!, prefix.count) == 0
            }
        }
        if let fast, let result = fast { return result }
        let path = rawValue.utf8, prefix = ancestor.rawValue.utf8
        guard path.count > prefix.count, path.starts(with: prefix) else { return false }
        return path[path.index(path.startIndex, offsetBy: prefix.count)] == UInt8(ascii: "/")
    }

    public static func < (lhs: DBusObjectPath, rhs: DBusObjectPath) -> Bool { lhs.rawValue < rhs.rawValue }
}

extension DBusObjectPath: CustomStringConvertible {
    public var description: String { rawValue }
}

extension DBusObjectPath: ExpressibleByStringLiteral {
    /// A path literal. A malformed literal is a programming error and traps.
    public init(stringLiteral value: String) {
        precondition(DBusObjectPath.isValid(value), "invalid D-Bus object path literal \"\(value)\"")
        self.rawValue = value
    }
}
