#if canImport(Glibc)
import Glibc
#endif
internal import CDBus

/// A cursor over a received message, read in place: for signal handlers that
/// run at bus rate and want a few fields without a `DBusMessage` being built.
///
/// A reader is lent to a handler registered with
/// `DBusConnection.addSignalHandler(matching:reader:)` for the duration of one
/// call, on the connection's thread. It must not be kept or used after the
/// handler returns, nor from another thread: it reads libdbus's copy of the
/// message, which is gone by then. One reader is reused for every message.
///
/// The body is read as a stack of positions: `typeCode` is the type at the
/// current position (`nil` past the end), `next()` moves along, `enter()`
/// descends into the container at the position (array, dict entry, struct,
/// variant) and `leave()` comes back up to that container's position.
/// `decodeMessage()` gives the whole message the ordinary way, for anything
/// the handler does not read itself.
public final class DBusMessageReader: @unchecked Sendable {
    // The state lives behind pointers rather than in stored `var`s: a class's
    // stored properties are checked for exclusive access at run time on every
    // use, and a reader is used a few dozen times per message.
    private let message = UnsafeMutablePointer<OpaquePointer?>.allocate(capacity: 1)
    /// One iterator per level entered; `depth` of them are live.
    private let iters = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: DBusMessageReader.maximumDepth)
    /// The type code at each level's position once asked for (-1: not yet):
    /// libdbus's `get_arg_type` costs as much as a small decode.
    private let codes = UnsafeMutablePointer<Int32>.allocate(capacity: DBusMessageReader.maximumDepth)
    private let levels = UnsafeMutablePointer<Int>.allocate(capacity: 1)
    private let decoder = UnsafeMutablePointer<MessageDecoder>.allocate(capacity: 1)

    /// D-Bus allows 32 nested arrays and 32 nested structs, and a variant per level.
    static let maximumDepth = 130

    init() {
        message.initialize(to: nil)
        levels.initialize(to: 0)
        decoder.initialize(to: MessageDecoder())
    }

    deinit {
        decoder.deinitialize(count: 1)
        decoder.deallocate()
        message.deallocate()
        iters.deallocate()
        codes.deallocate()
        levels.deallocate()
    }

    private var raw: OpaquePointer? { message.pointee }
    private var depth: Int {
        get { levels.pointee }
        set { levels.pointee = newValue }
    }
    /// The iterator of the innermost level.
    private var top: UnsafeMutablePointer<DBusMessageIter> { iters + (depth - 1) }

    /// Points the reader at `message`, at the start of its body.
    func reset(_ message: OpaquePointer) {
        self.message.pointee = message
        rewind()
    }

    /// Back to the start of the body, at the top level: for a handler that read
    /// part of the message and decided to read it another way.
    public func rewind() {
        depth = 0
        guard let raw else { return }
        if dbus_message_iter_init(raw, iters) == 0 { return }
        codes[0] = -1
        depth = 1
    }

    func clear() {
        message.pointee = nil
        depth = 0
    }

    // MARK: Header

    /// True when the message is the signal `member` of `interface`.
    public func isSignal(interface: String, member: String) -> Bool {
        guard let raw else { return false }
        // Through `withCString`: a short string passed as an argument is copied to the heap.
        return interface.withCString { i in member.withCString { m in dbus_message_is_signal(raw, i, m) } } != 0
    }

    /// True when the body's signature is exactly `signature`.
    public func hasSignature(_ signature: String) -> Bool {
        guard let raw else { return false }
        return signature.withCString { dbus_message_has_signature(raw, $0) } != 0
    }

    /// The object path the message is about.
    public var path: DBusObjectPath? {
        guard let raw, let p = dbus_message_get_path(raw) else { return nil }
        return DBusObjectPath(validated: String(cString: p))
    }

    /// Lends `body` the object path as libdbus holds it (NUL-terminated, valid
    /// only during the call): for a handler that looks the path up at bus rate
    /// and would rather not make a `String` of it each time. Nil without a path.
    public func withPath<T>(_ body: (UnsafePointer<CChar>) throws -> T) rethrows -> T? {
        guard let raw, let p = dbus_message_get_path(raw) else { return nil }
        return try body(p)
    }

    /// The unique name of the sender.
    public var sender: String? {
        guard let raw, let p = dbus_message_get_sender(raw) else { return nil }
        return String(cString: p)
    }

    /// The whole message, decoded as a handler that takes `DBusMessage` gets it.
    public func decodeMessage() throws(DBusDecodingError) -> DBusMessage {
        guard let raw else { throw .invalidValue("the reader holds no message") }
        return try decoder.pointee.decode(raw)
    }

    // MARK: Body

    /// The D-Bus type code at the current position (`s`, `a`, `v`, `e` for a
    /// dict entry, `r` for a struct, …), or nil past the end.
    public var typeCode: UInt8? {
        guard depth > 0 else { return nil }
        var code = codes[depth - 1]
        if code < 0 {
            code = dbus_message_iter_get_arg_type(top)
            codes[depth - 1] = code
        }
        return code == CDBUS_TYPE_INVALID ? nil : UInt8(truncatingIfNeeded: code)
    }

    /// For an array at the current position: its element's type code.
    public var elementTypeCode: UInt8? {
        guard typeCode == UInt8(ascii: "a") else { return nil }
        return UInt8(truncatingIfNeeded: dbus_message_iter_get_element_type(top))
    }

    /// Moves to the next value in the current container. False at the end.
    @discardableResult
    public func next() -> Bool {
        guard depth > 0 else { return false }
        let more = dbus_message_iter_next(top) != 0
        codes[depth - 1] = more ? -1 : CDBUS_TYPE_INVALID
        return more
    }

    /// Descends into the container at the current position. False (and no
    /// change) when the position holds no container.
    @discardableResult
    public func enter() -> Bool {
        guard depth < Self.maximumDepth, let code = typeCode,
            code == UInt8(ascii: "a") || code == UInt8(ascii: "v") || code == UInt8(ascii: "e")
                || code == UInt8(ascii: "r")
        else { return false }
        dbus_message_iter_recurse(top, iters + depth)
        codes[depth] = -1
        depth += 1
        return true
    }

    /// Comes back up to the container `enter()` descended into (the position
    /// stays on it; call `next()` to move past it).
    public func leave() {
        if depth > 1 { depth -= 1 }
    }

    /// The string (or object path, or signature) at the current position.
    /// Returns `known` itself, without making a new string, when the text equals it.
    public func readString(preferring known: String? = nil) -> String? {
        guard let code = typeCode,
            code == UInt8(ascii: "s") || code == UInt8(ascii: "o") || code == UInt8(ascii: "g")
        else { return nil }
        var p: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(top, &p)
        guard let p else { return "" }
        if let known, known.withCString({ strcmp($0, p) == 0 }) { return known }
        return String(cString: p)
    }

    /// The `UInt16` (`q`) at the current position.
    public func readUInt16() -> UInt16? {
        guard typeCode == UInt8(ascii: "q") else { return nil }
        var value: UInt16 = 0
        dbus_message_iter_get_basic(top, &value)
        return value
    }

    /// The `Int16` (`n`) at the current position.
    public func readInt16() -> Int16? {
        guard typeCode == UInt8(ascii: "n") else { return nil }
        var value: Int16 = 0
        dbus_message_iter_get_basic(top, &value)
        return value
    }

    /// The byte array (`ay`) at the current position, in one step.
    public func readBytes() -> [UInt8]? {
        guard elementTypeCode == UInt8(ascii: "y") else { return nil }
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(top, &sub)
        var pointer: UnsafeRawPointer?
        var count: Int32 = 0
        withUnsafeMutablePointer(to: &pointer) { p in
            dbus_message_iter_get_fixed_array(&sub, UnsafeMutableRawPointer(p), &count)
        }
        guard count > 0, let pointer else { return [] }
        return [UInt8](unsafeUninitializedCapacity: Int(count)) { buffer, initialized in
            buffer.baseAddress!.initialize(from: pointer.assumingMemoryBound(to: UInt8.self), count: Int(count))
            initialized = Int(count)
        }
    }

    /// The value at the current position, decoded as in a `DBusMessage` body
    /// (a variant comes as `.variant`).
    public func readValue() throws(DBusDecodingError) -> DBusValue {
        guard depth > 0 else { throw .invalidValue("no value at the end of the body") }
        return try decoder.pointee.decodeAny(&top.pointee)
    }
}
