internal import CDBus

/// Turns a received libdbus message into a `DBusMessage`.
///
/// libdbus has already validated the wire data, so the decoder walks the
/// message's own signature alongside the iterator. It reads arrays of fixed
/// types in one step and asks libdbus for a signature only for a container
/// inside a variant. Parsed signatures are cached, since a bus carries the same
/// few signatures over and over.
struct MessageDecoder {
    private var signatureCache: [String: [DBusType]] = [:]

    mutating func decode(_ raw: OpaquePointer) throws(DBusDecodingError) -> DBusMessage {
        let kind: DBusMessage.Kind
        switch dbus_message_get_type(raw) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: kind = .error
        case CDBUS_MESSAGE_TYPE_SIGNAL: kind = .signal
        case let other: throw .invalidValue("unknown message type \(other)")
        }
        var message = DBusMessage(kind: kind)
        message.serial = dbus_message_get_serial(raw)
        let replySerial = dbus_message_get_reply_serial(raw)
        if replySerial != 0 { message.replySerial = replySerial }
        if let p = dbus_message_get_path(raw) { message.path = DBusObjectPath(validated: String(cString: p)) }
        if let p = dbus_message_get_interface(raw) { message.interface = String(cString: p) }
        if let p = dbus_message_get_member(raw) { message.member = String(cString: p) }
        if let p = dbus_message_get_error_name(raw) { message.errorName = String(cString: p) }
        if let p = dbus_message_get_destination(raw) { message.destination = String(cString: p) }
        if let p = dbus_message_get_sender(raw) { message.sender = String(cString: p) }
        message.noReplyExpected = dbus_message_get_no_reply(raw) != 0
        message.autoStart = dbus_message_get_auto_start(raw) != 0

        let signature = String(cString: dbus_message_get_signature(raw))
        guard !signature.isEmpty else { return message }
        let types = try parse(signature)
        var iter = DBusMessageIter()
        guard dbus_message_iter_init(raw, &iter) != 0 else { return message }
        message.body.reserveCapacity(types.count)
        for (index, type) in types.enumerated() {
            if index > 0 { dbus_message_iter_next(&iter) }
            message.body.append(try decodeValue(&iter, as: type))
        }
        return message
    }

    private mutating func parse(_ signature: String) throws(DBusDecodingError) -> [DBusType] {
        if let cached = signatureCache[signature] { return cached }
        let types: [DBusType]
        do { types = try DBusSignature(signature).types } catch {
            throw .invalidValue("received an invalid signature '\(signature)': \(error)")
        }
        if signatureCache.count > 256 { signatureCache.removeAll(keepingCapacity: true) }
        signatureCache[signature] = types
        return types
    }

    /// The value at `iter`, of whatever type it has.
    mutating func decodeAny(_ iter: inout DBusMessageIter) throws(DBusDecodingError) -> DBusValue {
        guard dbus_message_iter_get_arg_type(&iter) != CDBUS_TYPE_INVALID,
            let type = try typeAt(&iter, signatureName: "signature")
        else { throw .invalidValue("no value to read") }
        return try decodeValue(&iter, as: type)
    }

    /// The type of the value at `iter`: read from the iterator for a basic
    /// type, a variant or a simple array, else parsed from the signature libdbus
    /// gives (nil when it gives none; `signatureName` names it in errors).
    private mutating func typeAt(_ iter: inout DBusMessageIter, signatureName: String) throws(DBusDecodingError)
        -> DBusType?
    {
        let code = dbus_message_iter_get_arg_type(&iter)
        if let basic = DBusType.basic(code: UInt8(truncatingIfNeeded: code)) { return basic }
        if code == CDBUS_TYPE_VARIANT { return .variant }
        if let simple = Self.simpleArrayType(&iter) { return simple }
        guard let raw = dbus_message_iter_get_signature(&iter) else { return nil }
        let text = String(cString: raw)
        dbus_free(raw)
        let parsed = try parse(text)
        guard parsed.count == 1 else { throw .invalidValue("\(signatureName) '\(text)' is not one type") }
        return parsed[0]
    }

    private mutating func decodeValue(_ iter: inout DBusMessageIter, as type: DBusType) throws(DBusDecodingError)
        -> DBusValue
    {
        let actual = dbus_message_iter_get_arg_type(&iter)
        // The iterator names containers by their type codes, which for structs and
        // dict entries ('r', 'e') differ from the characters that open them in a
        // signature ('(', '{').
        let expected: Int32 =
            switch type {
            case .structure: CDBUS_TYPE_STRUCT
            case .dictEntry: CDBUS_TYPE_DICT_ENTRY
            default: Int32(type.codeByte)
            }
        guard actual == expected else {
            throw .typeMismatch(
                expected: type.signature, actual: String(UnicodeScalar(UInt8(truncatingIfNeeded: actual))),
                context: "message body")
        }
        switch type {
        case .byte:
            var v: UInt8 = 0
            dbus_message_iter_get_basic(&iter, &v)
            return .byte(v)
        case .boolean:
            var v: dbus_bool_t = 0
            dbus_message_iter_get_basic(&iter, &v)
            return .boolean(v != 0)
        case .int16:
            var v: Int16 = 0
            dbus_message_iter_get_basic(&iter, &v)
            return .int16(v)
        case .uint16:
            var v: UInt16 = 0
            dbus_message_iter_get_basic(&iter, &v)
            return .uint16(v)
        case .int32:
            var v: Int32 = 0
            dbus_message_iter_get_basic(&iter, &v)
            return .int32(v)
        case .uint32:
            var v: UInt32 = 0
            dbus_message_iter_get_basic(&iter, &v)
            return .uint32(v)
        case .int64:
            var v: Int64 = 0
            dbus_message_iter_get_basic(&iter, &v)
            return .int64(v)
        case .uint64:
            var v: UInt64 = 0
            dbus_message_iter_get_basic(&iter, &v)
            return .uint64(v)
        case .double:
            var v: Double = 0
            dbus_message_iter_get_basic(&iter, &v)
            return .double(v)
        case .string:
            return .string(readString(&iter))
        case .objectPath:
            return .objectPath(DBusObjectPath(validated: readString(&iter)))
        case .signature:
            let text = readString(&iter)
            return .signature(DBusSignature(validated: text, types: try parse(text)))
        case .unixFD:
            // libdbus hands out a duplicate that the caller owns.
            var fd: Int32 = -1
            dbus_message_iter_get_basic(&iter, &fd)
            guard fd >= 0 else { throw .invalidValue("message carried an unusable file descriptor") }
            return .unixFD(DBusUnixFD(taking: fd))
        case .array(let element):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            if element == .byte {
                var pointer: UnsafeRawPointer?
                var count: Int32 = 0
                withUnsafeMutablePointer(to: &pointer) { p in
                    dbus_message_iter_get_fixed_array(&sub, UnsafeMutableRawPointer(p), &count)
                }
                guard count > 0, let pointer else { return .array(element: .byte, []) }
                let bytes = UnsafeBufferPointer(start: pointer.assumingMemoryBound(to: UInt8.self), count: Int(count))
                return .array(element: .byte, bytes.map(DBusValue.byte))
            }
            var elements: [DBusValue] = []
            while dbus_message_iter_get_arg_type(&sub) != CDBUS_TYPE_INVALID {
                elements.append(try decodeValue(&sub, as: element))
                dbus_message_iter_next(&sub)
            }
            return .array(element: element, elements)
        case .dictEntry(let keyType, let valueType):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            let key = try decodeValue(&sub, as: keyType)
            dbus_message_iter_next(&sub)
            let value = try decodeValue(&sub, as: valueType)
            return .dictEntry(key, value)
        case .structure(let fieldTypes):
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            var fields: [DBusValue] = []
            fields.reserveCapacity(fieldTypes.count)
            for (index, fieldType) in fieldTypes.enumerated() {
                if index > 0 { dbus_message_iter_next(&sub) }
                fields.append(try decodeValue(&sub, as: fieldType))
            }
            return .structure(fields)
        case .variant:
            var sub = DBusMessageIter()
            dbus_message_iter_recurse(&iter, &sub)
            guard let innerType = try typeAt(&sub, signatureName: "variant signature") else {
                throw .invalidValue("variant without a signature")
            }
            return .variant(try decodeValue(&sub, as: innerType))
        }
    }

    /// The type of the array at `iter` when it is one of the shapes that fill
    /// property values (`ay`, `as`, `a{qv}`, `a{sv}`, …: an array of a basic
    /// type, or a non-empty dictionary from a basic type to a basic type or a
    /// variant), read from the iterator; nil for anything else. That spares the
    /// signature string libdbus would allocate for each such variant.
    private static func simpleArrayType(_ iter: inout DBusMessageIter) -> DBusType? {
        guard dbus_message_iter_get_arg_type(&iter) == CDBUS_TYPE_ARRAY else { return nil }
        let element = dbus_message_iter_get_element_type(&iter)
        if let basic = DBusType.basic(code: UInt8(truncatingIfNeeded: element)) { return .array(basic) }
        guard element == CDBUS_TYPE_DICT_ENTRY else { return nil }
        // An empty dictionary has no entry to look at: the caller reads the signature.
        var entries = DBusMessageIter()
        dbus_message_iter_recurse(&iter, &entries)
        guard dbus_message_iter_get_arg_type(&entries) == CDBUS_TYPE_DICT_ENTRY else { return nil }
        var entry = DBusMessageIter()
        dbus_message_iter_recurse(&entries, &entry)
        guard let key = DBusType.basic(code: UInt8(truncatingIfNeeded: dbus_message_iter_get_arg_type(&entry))),
            dbus_message_iter_next(&entry) != 0
        else { return nil }
        let valueCode = dbus_message_iter_get_arg_type(&entry)
        let value: DBusType
        if let basic = DBusType.basic(code: UInt8(truncatingIfNeeded: valueCode)) {
            value = basic
        } else if valueCode == CDBUS_TYPE_VARIANT {
            value = .variant
        } else {
            return nil
        }
        return .array(.dictEntry(key: key, value: value))
    }

    private func readString(_ iter: inout DBusMessageIter) -> String {
        var p: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iter, &p)
        guard let p else { return "" }
        return String(cString: p)
    }
}
