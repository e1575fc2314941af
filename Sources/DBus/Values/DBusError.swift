/// An error carrying a D-Bus error name and a human-readable message.
///
/// Errors returned by a peer (for example `org.bluez.Error.NotPermitted`)
/// arrive as this type, and errors thrown by exported method handlers are sent
/// back as error replies with this name and message. Local failures (a closed
/// connection, an argument libdbus would refuse) use the standard
/// `org.freedesktop.DBus.Error.*` names.
public struct DBusError: Error, Sendable, Hashable {
    /// The error name, for example `org.freedesktop.DBus.Error.UnknownMethod`.
    public var name: String
    /// The message that came with the error; may be empty.
    public var message: String

    /// Creates an error. A `name` that is not a valid error name is replaced by
    /// `org.freedesktop.DBus.Error.Failed` when the error is sent.
    public init(name: String, message: String) {
        self.name = name
        self.message = message
    }

    /// Creates an error with one of the standard names.
    public init(_ name: Name, _ message: String) {
        self.init(name: name.rawValue, message: message)
    }

    /// True when this error has the given name.
    public func `is`(_ name: Name) -> Bool { self.name == name.rawValue }

    /// Well-known error names from the D-Bus specification.
    public struct Name: RawRepresentable, Sendable, Hashable {
        public var rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }

        public static let failed = Name(rawValue: "org.freedesktop.DBus.Error.Failed")
        public static let noMemory = Name(rawValue: "org.freedesktop.DBus.Error.NoMemory")
        public static let serviceUnknown = Name(rawValue: "org.freedesktop.DBus.Error.ServiceUnknown")
        public static let nameHasNoOwner = Name(rawValue: "org.freedesktop.DBus.Error.NameHasNoOwner")
        public static let noReply = Name(rawValue: "org.freedesktop.DBus.Error.NoReply")
        public static let timeout = Name(rawValue: "org.freedesktop.DBus.Error.Timeout")
        public static let disconnected = Name(rawValue: "org.freedesktop.DBus.Error.Disconnected")
        public static let invalidArgs = Name(rawValue: "org.freedesktop.DBus.Error.InvalidArgs")
        public static let invalidSignature = Name(rawValue: "org.freedesktop.DBus.Error.InvalidSignature")
        public static let unknownMethod = Name(rawValue: "org.freedesktop.DBus.Error.UnknownMethod")
        public static let unknownObject = Name(rawValue: "org.freedesktop.DBus.Error.UnknownObject")
        public static let unknownInterface = Name(rawValue: "org.freedesktop.DBus.Error.UnknownInterface")
        public static let unknownProperty = Name(rawValue: "org.freedesktop.DBus.Error.UnknownProperty")
        public static let propertyReadOnly = Name(rawValue: "org.freedesktop.DBus.Error.PropertyReadOnly")
        public static let accessDenied = Name(rawValue: "org.freedesktop.DBus.Error.AccessDenied")
        public static let notSupported = Name(rawValue: "org.freedesktop.DBus.Error.NotSupported")
        public static let limitsExceeded = Name(rawValue: "org.freedesktop.DBus.Error.LimitsExceeded")
        public static let matchRuleInvalid = Name(rawValue: "org.freedesktop.DBus.Error.MatchRuleInvalid")
        /// Not sent by any bus: the local call was cancelled by its task.
        public static let cancelled = Name(rawValue: "org.freedesktop.DBus.Error.Cancelled")
    }
}

extension DBusError: CustomStringConvertible {
    public var description: String { message.isEmpty ? name : "\(name): \(message)" }
}

/// Why a received value could not be turned into the Swift type asked for.
///
/// Decoding never traps: a reply with the wrong signature, a variant holding
/// the wrong type or a missing dictionary key each give one of these cases.
public enum DBusDecodingError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The value has type `actual` where `expected` was needed.
    case typeMismatch(expected: String, actual: String, context: String)
    /// A message body's signature is not the one expected.
    case signatureMismatch(expected: String, actual: String)
    /// A required key is absent from a dictionary.
    case missingKey(String)
    /// A value is of the right type but out of range or malformed.
    case invalidValue(String)

    public var description: String {
        switch self {
        case .typeMismatch(let expected, let actual, let context):
            "expected a value of type '\(expected)' but got '\(actual)'\(context.isEmpty ? "" : " (\(context))")"
        case .signatureMismatch(let expected, let actual):
            "expected arguments of signature '\(expected)' but got '\(actual)'"
        case .missingKey(let key): "required key '\(key)' is missing"
        case .invalidValue(let what): what
        }
    }
}
