internal import CDBus

/// A libdbus message owned by Swift: released when the last reference goes.
///
/// Once built it is not mutated again, except by libdbus itself when it is
/// sent (libdbus locks a message while it sets the serial), so it may cross
/// threads on its way to the connection's loop.
final class LibDBusMessage: @unchecked Sendable {
    let pointer: OpaquePointer

    init(taking pointer: OpaquePointer) { self.pointer = pointer }
    deinit { dbus_message_unref(pointer) }
}

/// Turns a `DBusMessage` into a libdbus message.
///
/// Every field and value is validated first: libdbus aborts the process on an
/// invalid name or a malformed value, so nothing reaches it unchecked.
enum MessageEncoder {
    static func encode(_ message: DBusMessage) throws(DBusError) -> LibDBusMessage {
        try message.validate()
        let type: Int32 =
            switch message.kind {
            case .methodCall: CDBUS_MESSAGE_TYPE_METHOD_CALL
            case .methodReturn: CDBUS_MESSAGE_TYPE_METHOD_RETURN
            case .error: CDBUS_MESSAGE_TYPE_ERROR
            case .signal: CDBUS_MESSAGE_TYPE_SIGNAL
            }
        guard let raw = dbus_message_new(type) else { throw DBusError(.noMemory, "dbus_message_new failed") }
        let out = LibDBusMessage(taking: raw)
        var ok: dbus_bool_t = 1
        if let path = message.path { ok &= dbus_message_set_path(raw, path.rawValue) }
        if let interface = message.interface { ok &= dbus_message_set_interface(raw, interface) }
        if let member = message.member { ok &= dbus_message_set_member(raw, member) }
        if let errorName = message.errorName { ok &= dbus_message_set_error_name(raw, errorName) }
        if let destination = message.destination { ok &= dbus_message_set_destination(raw, destination) }
        if let replySerial = message.replySerial { ok &= dbus_message_set_reply_serial(raw, replySerial) }
        if message.kind == .methodCall {
            dbus_message_set_no_reply(raw, message.noReplyExpected ? 1 : 0)
            dbus_message_set_auto_start(raw, message.autoStart ? 1 : 0)
        }
        guard ok != 0 else { throw DBusError(.noMemory, "out of memory setting message headers") }
        var iter = DBusMessageIter()
        dbus_message_iter_init_append(raw, &iter)
        for value in message.body {
            guard append(value, to: &iter) else { throw DBusError(.noMemory, "out of memory appending arguments") }
        }
        return out
    }

    /// Appends one (already validated) value. False only when libdbus runs out of memory.
    static func append(_ value: DBusValue, to iter: inout DBusMessageIter) -> Bool {
        switch value {
        case .byte(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_BYTE, &v) != 0
        case .boolean(let b):
            var v: dbus_bool_t = b ? 1 : 0
            return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_BOOLEAN, &v) != 0
        case .int16(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT16, &v) != 0
        case .uint16(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT16, &v) != 0
        case .int32(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT32, &v) != 0
        case .uint32(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT32, &v) != 0
        case .int64(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_INT64, &v) != 0
        case .uint64(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UINT64, &v) != 0
        case .double(var v): return dbus_message_iter_append_basic(&iter, CDBUS_TYPE_DOUBLE, &v) != 0
        case .string(let s): return appendString(s, CDBUS_TYPE_STRING, &iter)
        case .objectPath(let p): return appendString(p.rawValue, CDBUS_TYPE_OBJECT_PATH, &iter)
        case .signature(let g): return appendString(g.rawValue, CDBUS_TYPE_SIGNATURE, &iter)
        case .unixFD(let fd):
            var v = fd.fileDescriptor
            return withExtendedLifetime(fd) { dbus_message_iter_append_basic(&iter, CDBUS_TYPE_UNIX_FD, &v) != 0 }
        case .array(let element, let elements):
            if element == .byte {
                return appendByteArray(elements, to: &iter)
            }
            return appendContainer(CDBUS_TYPE_ARRAY, signature: element.signature, to: &iter) { sub in
                for e in elements where !append(e, to: &sub) { return false }
                return true
            }
        case .structure(let fields):
            return appendContainer(CDBUS_TYPE_STRUCT, signature: nil, to: &iter) { sub in
                for f in fields where !append(f, to: &sub) { return false }
                return true
            }
        case .dictEntry(let key, let value):
            return appendContainer(CDBUS_TYPE_DICT_ENTRY, signature: nil, to: &iter) { sub in
                append(key, to: &sub) && append(value, to: &sub)
            }
        case .variant(let inner):
            return appendContainer(CDBUS_TYPE_VARIANT, signature: inner.type.signature, to: &iter) { sub in
                append(inner, to: &sub)
            }
        }
    }

    private static func appendString(_ s: String, _ type: Int32, _ iter: inout DBusMessageIter) -> Bool {
        s.withCString { cstr in
            var p: UnsafePointer<CChar>? = cstr
            return dbus_message_iter_append_basic(&iter, type, &p) != 0
        }
    }

    private static func appendByteArray(_ elements: [DBusValue], to iter: inout DBusMessageIter) -> Bool {
        var bytes = [UInt8]()
        bytes.reserveCapacity(elements.count)
        for case .byte(let b) in elements { bytes.append(b) }
        return appendContainer(CDBUS_TYPE_ARRAY, signature: "y", to: &iter) { sub in
            bytes.withUnsafeBufferPointer { buffer in
                var base: UnsafePointer<UInt8>? = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)
                return dbus_message_iter_append_fixed_array(&sub, CDBUS_TYPE_BYTE, &base, Int32(buffer.count)) != 0
            }
        }
    }

    private static func appendContainer(
        _ type: Int32, signature: String?, to iter: inout DBusMessageIter,
        _ body: (inout DBusMessageIter) -> Bool
    ) -> Bool {
        var sub = DBusMessageIter()
        let opened: dbus_bool_t =
            if let signature {
                signature.withCString { dbus_message_iter_open_container(&iter, type, $0, &sub) }
            } else {
                dbus_message_iter_open_container(&iter, type, nil, &sub)
            }
        guard opened != 0 else { return false }
        guard body(&sub) else {
            dbus_message_iter_abandon_container(&iter, &sub)
            return false
        }
        return dbus_message_iter_close_container(&iter, &sub) != 0
    }
}
