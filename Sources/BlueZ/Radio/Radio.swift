import DBus

/// What handoffd needs from the air, and all it may ask of it: the scan
/// reports of our company ID, its advertisements (one per slot), a pause of
/// discovery around a connection, a status line, and the bus and BlueZ mirror
/// that GATT clients and servers work on.
///
/// `LERadio` is the implementation over bluetoothd; tests drive handoffd
/// through a fake. Whoever holds the radio is the one owner of what goes on
/// the air: there is no second way to change the advertisement.
public protocol Radio: Actor {
    /// The reports heard, in order.
    nonisolated var scanEvents: ScanEvents { get }
    /// Where GATT parts register and connect: nil when there is no bluetoothd
    /// behind the radio (a test's fake).
    nonisolated var bluez: BlueZContext? { get }
    /// Where the radio stands, for `status`.
    var status: RadioStatus { get }
    /// Puts `advertisements` on the air in place of whatever was there, one
    /// advertising instance per slot; a slot not listed is taken off the air
    /// (an empty list: nothing of ours). Returns once the radio has acted on it,
    /// or, while it is busy with an earlier change, once it knows to go round again.
    /// Slots are registered in ascending order: when the adapter runs out of
    /// advertising instances, the higher slots are the ones left off.
    func advertise(_ advertisements: [RadioAdvertisement]) async
    /// Stops discovery until the matching `resumeDiscovery`; calls nest.
    func pauseDiscovery() async
    func resumeDiscovery() async
    /// Keeps scanning and advertising going until the task is cancelled.
    func run() async
    /// Takes everything off the air and stops.
    func shutDown() async
}

/// One advertisement: our Manufacturer Specific Data, and whether peers may connect.
public struct RadioAdvertisement: Sendable, Equatable {
    /// The data after the company ID.
    public var payload: [UInt8]
    /// `broadcast` (non-connectable) or `peripheral` (connectable, for GATT).
    public var type: LEAdvertisementData.AdvertisingType
    /// Which of our advertising instances carries it (0, 1, …): a new payload in
    /// the same slot replaces the old one.
    public var slot: Int

    public init(payload: [UInt8], type: LEAdvertisementData.AdvertisingType, slot: Int = 0) {
        self.payload = payload
        self.type = type
        self.slot = slot
    }
}

extension Radio {
    /// Puts one advertisement on the air in slot 0 alone, or takes ours off (nil).
    public func advertise(_ advertisement: RadioAdvertisement?) async {
        await advertise(advertisement.map { [$0] } ?? [])
    }
}

/// The bus connection, BlueZ mirror and adapter choice that the radio uses, for
/// the GATT application and for connecting to other devices.
public struct BlueZContext: Sendable {
    public let connection: DBusConnection
    public let manager: BlueZObjectManager
    public let adapter: AdapterSelector

    public init(connection: DBusConnection, manager: BlueZObjectManager, adapter: AdapterSelector) {
        self.connection = connection
        self.manager = manager
        self.adapter = adapter
    }
}

/// A snapshot of the radio for status displays.
public struct RadioStatus: Sendable, Equatable {
    /// Where the radio stands.
    public enum Phase: Sendable, Equatable, CustomStringConvertible {
        case waitingForBluetoothd
        case waitingForAdapter
        case adapterOff(String)
        case ready(String)
        case failing(String)

        public var description: String {
            switch self {
            case .waitingForBluetoothd: "waiting for bluetoothd (org.bluez is not on the bus)"
            case .waitingForAdapter: "waiting for an adapter"
            case .adapterOff(let name): "adapter \(name) is powered off"
            case .ready(let name): "scanning on \(name)"
            case .failing(let why): "retrying: \(why)"
            }
        }
    }

    public var phase: Phase
    public var adapter: String?
    public var adapterAddress: String?
    public var scanning: Bool
    /// Whether any of our advertisements is registered.
    public var advertising: Bool
    /// The slots whose advertisement bluetoothd has registered.
    public var advertisingSlots: Set<Int>
    /// Why a wanted slot is not on the air, when bluetoothd refused it.
    public var slotErrors: [Int: String]
    public var lastError: String?
    /// Reports dropped because the consumer fell behind, since the radio started.
    public var droppedReports: UInt64
    /// How the radio listens: an advertisement monitor or discovery.
    public var scanPath: ScanPath

    public init(
        phase: Phase, adapter: String? = nil, adapterAddress: String? = nil, scanning: Bool = false,
        advertising: Bool = false, advertisingSlots: Set<Int>? = nil, slotErrors: [Int: String] = [:],
        lastError: String? = nil, droppedReports: UInt64 = 0, scanPath: ScanPath? = nil
    ) {
        self.phase = phase
        self.adapter = adapter
        self.adapterAddress = adapterAddress
        self.scanning = scanning
        self.advertising = advertising
        self.advertisingSlots = advertisingSlots ?? (advertising ? [0] : [])
        self.slotErrors = slotErrors
        self.lastError = lastError
        self.droppedReports = droppedReports
        self.scanPath = scanPath ?? (scanning ? .discovery : .none)
    }
}

extension RadioAdvertisement {
    /// A non-connectable advertisement of `payload`.
    public static func broadcast(_ payload: [UInt8]) -> RadioAdvertisement {
        RadioAdvertisement(payload: payload, type: .broadcast)
    }
}
