/// An interface that an exported object implements: its methods, properties
/// and signals, with the handlers that serve them.
public struct DBusInterface: Sendable {
    /// The interface name, for example `org.bluez.LEAdvertisement1`.
    public var name: String
    public var methods: [DBusMethod]
    public var properties: [DBusProperty]
    /// Signals, listed for introspection; emit them with `DBusExportedObject.emitSignal`.
    public var signals: [DBusSignalDescription]

    public init(
        _ name: String, methods: [DBusMethod] = [], properties: [DBusProperty] = [],
        signals: [DBusSignalDescription] = []
    ) {
        self.name = name
        self.methods = methods
        self.properties = properties
        self.signals = signals
    }
}

/// A method of an exported interface.
///
/// The handler runs as its own task, so a slow handler never stops the
/// connection from serving other calls. Throwing a `DBusError` sends that
/// error back; any other error is sent as `org.freedesktop.DBus.Error.Failed`.
public struct DBusMethod: Sendable {
    public typealias Handler = @Sendable (DBusMessage) async throws -> [DBusValue]

    public var name: String
    /// The signature the arguments must have; a call with another gets `InvalidArgs`.
    public var inputs: DBusSignature
    /// The signature the handler's result must have.
    public var outputs: DBusSignature
    /// Names for the arguments, inputs first, used in introspection.
    public var argumentNames: [String]
    public var handler: Handler

    public init(
        _ name: String, inputs: DBusSignature = .empty, outputs: DBusSignature = .empty,
        argumentNames: [String] = [], handler: @escaping Handler
    ) {
        self.name = name
        self.inputs = inputs
        self.outputs = outputs
        self.argumentNames = argumentNames
        self.handler = handler
    }
}

/// A property of an exported interface, stored by the connection.
///
/// The owner changes it with `DBusExportedObject.setProperty`, which emits
/// `PropertiesChanged` as `changeSignal` says. Peers may `Set` it only when
/// `access` allows, and `validate` may veto their value.
public struct DBusProperty: Sendable {
    public enum Access: String, Sendable {
        case read, write, readwrite
    }
    /// The `org.freedesktop.DBus.Property.EmitsChangedSignal` behaviour.
    public enum ChangeSignal: String, Sendable {
        /// Emit the new value.
        case `true`
        /// Emit only the name, as invalidated.
        case invalidates
        /// The value never changes.
        case const
        /// Emit nothing.
        case `false`
    }
    public typealias Validator = @Sendable (DBusValue) throws -> Void

    public var name: String
    public var type: DBusType
    public var value: DBusValue
    public var access: Access
    public var changeSignal: ChangeSignal
    public var validate: Validator?

    public init(
        _ name: String, type: DBusType, value: DBusValue, access: Access = .read,
        changeSignal: ChangeSignal = .true, validate: Validator? = nil
    ) {
        self.name = name
        self.type = type
        self.value = value
        self.access = access
        self.changeSignal = changeSignal
        self.validate = validate
    }

    /// A read-only property whose type is taken from its value.
    public init<T: DBusCodable>(_ name: String, _ value: T, access: Access = .read, changeSignal: ChangeSignal = .true)
    {
        self.init(name, type: T.dbusType, value: value.dbusValue, access: access, changeSignal: changeSignal)
    }
}

/// A signal an interface may emit, for introspection.
public struct DBusSignalDescription: Sendable {
    public var name: String
    public var signature: DBusSignature
    public var argumentNames: [String]

    public init(_ name: String, signature: DBusSignature = .empty, argumentNames: [String] = []) {
        self.name = name
        self.signature = signature
        self.argumentNames = argumentNames
    }
}
