import DBus

/// What bluetoothd's GATT client exports for one remote device: its services,
/// characteristics and CCC descriptors under the Device1 path
/// (`…/dev_XX/serviceHHHH/charHHHH/descHHHH`, named by attribute handle).
///
/// As on 5.66, the objects stay when the device disconnects (calls then fail
/// with "Not connected") and go with the Device1 object. Confined to its
/// `BluetoothDaemon`.
final class RemoteGattView {
    let devicePath: DBusObjectPath
    /// The adapter whose bluetoothd runs this client.
    let clientAdapter: String
    var services: [RemoteService] = []

    init(devicePath: DBusObjectPath, clientAdapter: String) {
        self.devicePath = devicePath
        self.clientAdapter = clientAdapter
    }

    var characteristics: [RemoteCharacteristic] { services.flatMap(\.characteristics) }
}

/// Where a remote attribute's value comes from, on the other adapter.
enum RemoteSource: Equatable {
    /// One of bluetoothd's own characteristics.
    case builtin
    /// A characteristic of a registered application.
    case application(id: UInt64, owner: String, path: DBusObjectPath)
}

/// A remote service object.
final class RemoteService {
    let path: DBusObjectPath
    let uuid: String
    let handle: UInt16
    /// The registered application it comes from, or nil for bluetoothd's own.
    let applicationID: UInt64?
    let box = ExportedObjectBox()
    var characteristics: [RemoteCharacteristic] = []

    init(path: DBusObjectPath, uuid: String, handle: UInt16, applicationID: UInt64?) {
        self.path = path
        self.uuid = uuid
        self.handle = handle
        self.applicationID = applicationID
    }

    /// Same service as before a reconnection: bluetoothd keeps the object.
    func matches(uuid: String, handle: UInt16, applicationID: UInt64?) -> Bool {
        self.uuid == uuid && self.handle == handle && self.applicationID == applicationID
    }
}

/// A remote characteristic object and the client-side state bluetoothd keeps for it.
final class RemoteCharacteristic {
    let path: DBusObjectPath
    let devicePath: DBusObjectPath
    let clientAdapter: String
    let uuid: String
    let flags: GattFlags
    /// The declaration handle.
    let handle: UInt16
    let source: RemoteSource
    let box = ExportedObjectBox()
    /// The CCC descriptor object, when the characteristic can notify.
    let descriptorBox: ExportedObjectBox?
    /// For bluetoothd's own characteristics: the value it serves.
    var builtinValue: [UInt8]
    /// The cached `Value`.
    var value: [UInt8] = []
    /// Unique names of the clients with a notification session, in order.
    var notifyClients: [String] = []
    /// The published `Notifying`.
    var notifying = false
    /// Whether the CCC on the remote side is enabled for this link.
    var subscribed = false
    /// A read under way, and its offset; reads at the same offset join it.
    var read: (offset: UInt16, task: Task<Result<[UInt8], DBusError>, Never>)?
    /// A write (request) under way.
    var writing = false

    init(
        path: DBusObjectPath, devicePath: DBusObjectPath, clientAdapter: String, uuid: String, flags: GattFlags,
        handle: UInt16, source: RemoteSource, builtinValue: [UInt8] = []
    ) {
        self.path = path
        self.devicePath = devicePath
        self.clientAdapter = clientAdapter
        self.uuid = uuid
        self.flags = flags
        self.handle = handle
        self.source = source
        self.builtinValue = builtinValue
        descriptorBox = flags.canNotify ? ExportedObjectBox() : nil
    }

    var cccHandle: UInt16 { handle &+ 2 }
}

/// All of a daemon's GATT state: registered applications, LE links, and the
/// remote objects its GATT clients export. Confined to its `BluetoothDaemon`.
final class GattState {
    var applications: [RegisteredApplication] = []
    var links: [LELink] = []
    /// By Device1 path.
    var views: [DBusObjectPath: RemoteGattView] = [:]
    /// Remote characteristic objects by path.
    var characteristics: [DBusObjectPath: RemoteCharacteristic] = [:]
    /// Enabled CCCs per application characteristic, across links (bluetoothd's `ntfy_cnt`).
    var notifyCounts: [ApplicationCharacteristic: Int] = [:]
    /// LE links whose GATT discovery is still to stall (`SimulatorConfiguration.stalledDiscoveries`).
    var stalledDiscoveriesLeft = 0
    /// Notifications delivered per link, while a link is still to drop (`SimulatorConfiguration.dropLinkAfterNotifications`).
    var deliveredNotifications: [UInt64: Int] = [:]
    var droppedALink = false

    struct ApplicationCharacteristic: Hashable {
        let application: UInt64
        let path: DBusObjectPath
    }

    init() {}

    /// The link `device` is an end of (connecting, connected or disconnecting).
    func link(of device: RemoteDevice) -> LELink? {
        links.first { $0.involves(device) }
    }

    func application(_ id: UInt64) -> RegisteredApplication? {
        applications.first { $0.id == id }
    }
}
