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
    private var raw: OpaquePointer?
    private var stack: [DBusMessageIter] = []
    private var decoder = MessageDecoder()

    init() {
        stack.reserveCapacity(8)
    }

    /// Points the reader at `message`, at the start of its body.
    func reset(_ message: OpaquePointer) {
        raw = message
        rewind()
    }

    /// Back to the start of the body.
    func rewind() {
        stack.removeAll(keepingCapacity: true)
        var iter = DBusMessageIter()
        guard let raw else { return }
        if dbus_message_iter_init(raw, &iter) == 0 { return }
        stack.append(iter)
    }

    func clear() {
        raw = nil
        stack.removeAll(keepingCapacity: true)
    }

    // MARK: Header

    /// True when the message is the signal `member` of `interface`.
    public func isSignal(interface: String, member: String) -> Bool {
        guard let raw else { return false }
        return dbus_message_is_signal(raw, interface, member) != 0
    }

    /// True when the body's signature is exactly `signature`.
    public func hasSignature(_ signature: String) -> Bool {
        guard let raw else { return false }
        return dbus_message_has_signature(raw, signature) != 0
    }

    /// The object path the message is about.
    public var path: DBusObjectPath? {
        guard let raw, let p = dbus_message_get_path(raw) else { return nil }
        return DBusObjectPath(validated: String(cString: p))
    }

    /// The unique name of the sender.
    public var sender: String? {
        guard let raw, let p = dbus_message_get_sender(raw) else { return nil }
        return String(cString: p)
    }

    /// The whole message, decoded as a handler that takes `DBusMessage` gets it.
    public func decodeMessage() throws(DBusDecodingError) -> DBusMessage {
        guard let raw else { throw .invalidValue("the reader holds no message") }
        return try decoder.decode(raw)
    }

    // MARK: Body

    /// The D-Bus type code at the current position (`s`, `a`, `v`, `e` for a
    /// dict entry, `r` for a struct, …), or nil past the end.
    public var typeCode: UInt8? {
        guard !stack.isEmpty else { return nil }
        let code = dbus_message_iter_get_arg_type(&stack[stack.count - 1])
        return code == CDBUS_TYPE_INVALID ? nil : UInt8(truncatingIfNeeded: code)
    }

    /// For an array at the current position: its element's type code.
    public var elementTypeCode: UInt8? {
        guard typeCode == UInt8(ascii: "a") else { return nil }
        return UInt8(truncatingIfNeeded: dbus_message_iter_get_element_type(&stack[stack.count - 1]))
    }

    /// Moves to the next value in the current container. False at the end.
    @discardableResult
    public func next() -> Bool {
        guard !stack.isEmpty else { return false }
        return dbus_message_iter_next(&stack[stack.count - 1]) != 0
    }

    /// Descends into the container at the current position. False (and no
    /// change) when the position holds no container.
    @discardableResult
    public func enter() -> Bool {
        guard let code = typeCode,
            code == UInt8(ascii: "a") || code == UInt8(ascii: "v") || code == UInt8(ascii: "e")
                || code == UInt8(ascii: "r")
        else { return false }
        var sub = DBusMessageIter()
        dbus_message_iter_recurse(&stack[stack.count - 1], &sub)
        stack.append(sub)
        return true
    }

    /// Comes back up to the container `enter()` descended into (the position
    /// stays on it; call `next()` to move past it).
    public func leave() {
        if stack.count > 1 { stack.removeLast() }
    }

    /// The string (or object path, or signature) at the current position.
    /// Returns `known` itself, without making a new string, when the text equals it.
    public func readString(preferring known: String? = nil) -> String? {
        guard let code = typeCode,
            code == UInt8(ascii: "s") || code == UInt8(ascii: "o") || code == UInt8(ascii: "g")
        else { return nil }
        var p: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&stack[stack.count - 1], &p)
        guard let p else { return "" }
        if let known, known.withCString({ strcmp($0, p) == 0 }) { return known }
        return String(cString: p)
    }

    /// The value at the current position, decoded as in a `DBusMessage` body
    /// (a variant comes as `.variant`).
    public func readValue() throws(DBusDecodingError) -> DBusValue {
        guard !stack.isEmpty else { throw .invalidValue("no value at the end of the body") }
        return try decoder.decodeAny(&stack[stack.count - 1])
    }
}
