import DBus

/// A characteristic this process serves, described before export: what
/// becomes an `org.bluez.GattCharacteristic1` object of a `GattApplication`
/// (server side of BlueZ's org.bluez.GattCharacteristic documentation).
///
/// The handlers run as tasks, one per call, with the options bluetoothd sends
/// (remote device, MTU, offset, link). A handler may be synchronous or
/// asynchronous. Throw a `GattError` (a `DBusError` with an `org.bluez.Error.*`
/// name) to refuse; any other error goes back as `org.bluez.Error.Failed`
/// (ATT error 0x80) with a fixed message, so nothing of the error's text
/// leaves the process.
public struct LocalGattCharacteristic: Sendable {
    /// Returns the value from `options.offset` on (bluetoothd sends one
    /// `ReadValue` per ATT read; a long read asks again at growing offsets).
    /// bluetoothd keeps at most 512 bytes of the result.
    public typealias ReadHandler = @Sendable (GattRequestOptions) async throws -> [UInt8]
    /// Takes a written value. For a long write bluetoothd joins the prepared
    /// parts and calls this once with the whole value.
    public typealias WriteHandler = @Sendable ([UInt8], GattRequestOptions) async throws -> Void
    /// bluetoothd calls StartNotify each time a remote device enables
    /// notifications (indications), and StopNotify when the last one disables
    /// them or disconnects. Their replies are ignored.
    public typealias NotifyHandler = @Sendable () async -> Void

    /// The characteristic UUID (128-bit, or a 16/32-bit form bluetoothd accepts).
    public var uuid: String
    /// The properties; bluetoothd refuses an empty list or an unknown flag.
    public var flags: [GattCharacteristic1.Flag]
    public var onRead: ReadHandler?
    public var onWrite: WriteHandler?
    public var onStartNotify: NotifyHandler?
    public var onStopNotify: NotifyHandler?

    public init(
        uuid: String, flags: [GattCharacteristic1.Flag], onRead: ReadHandler? = nil, onWrite: WriteHandler? = nil,
        onStartNotify: NotifyHandler? = nil, onStopNotify: NotifyHandler? = nil
    ) {
        self.uuid = uuid
        self.flags = flags
        self.onRead = onRead
        self.onWrite = onWrite
        self.onStartNotify = onStartNotify
        self.onStopNotify = onStopNotify
    }

    /// True when the flags allow notifications or indications.
    public var canNotify: Bool { flags.contains(.notify) || flags.contains(.indicate) }
}
