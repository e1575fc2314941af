import DBus
import Synchronization

/// A live mirror of bluetoothd's object tree.
///
/// It makes one `GetManagedObjects` call and one subscription to everything
/// `org.bluez` sends (InterfacesAdded, InterfacesRemoved, PropertiesChanged),
/// keeps the tree current, and fans each change out to observers. It never
/// polls. When bluetoothd leaves the bus the tree empties (`serviceVanished`);
/// when it comes back the tree is loaded afresh (`serviceAppeared`).
///
/// Observers run synchronously on the D-Bus connection's thread for signals,
/// so they must be quick and must not block.
public final class BlueZObjectManager: Sendable {
    /// Interfaces of one object: interface name → property name → value.
    public typealias Interfaces = [String: [String: DBusValue]]

    /// A change in the tree.
    public enum Event: Sendable {
        /// bluetoothd is on the bus and the tree is loaded.
        case serviceAppeared
        /// bluetoothd left the bus; every object is gone.
        case serviceVanished
        /// An object gained interfaces (a new adapter, a newly heard device, …).
        case interfacesAdded(DBusObjectPath, Interfaces)
        /// An object lost interfaces; when none remain the object is gone.
        case interfacesRemoved(DBusObjectPath, [String])
        /// Properties changed. `current` is the interface's full set after the change.
        /// A change of nothing but a Device1's RSSI and ManufacturerData goes to
        /// `observeAdvertisements` instead.
        case propertiesChanged(
            DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String],
            current: [String: DBusValue])
    }

    struct State {
        /// The tree. Device1's RSSI and ManufacturerData may lag `devices`:
        /// `settle()` before reading them.
        var objects: [DBusObjectPath: Interfaces] = [:]
        /// The Device1 objects, typed, as the advertisement path keeps them.
        var devices = DeviceTable()
        var owner: String?
        var observers: [UInt64: @Sendable (Event) -> Void] = [:] {
            didSet { observerList = Array(observers.values) }
        }
        /// `observers.values`, kept ready: signals are delivered at bus rate.
        var observerList: [@Sendable (Event) -> Void] = []
        var advertisementObservers: [UInt64: @Sendable (DeviceAdvertisement) -> Void] = [:] {
            didSet { advertisementObserverList = Array(advertisementObservers.values) }
        }
        var advertisementObserverList: [@Sendable (DeviceAdvertisement) -> Void] = []
        var unannouncedObservers: [UInt64: @Sendable (DBusObjectPath, ManufacturerData?) -> Void] = [:] {
            didSet { unannouncedObserverList = Array(unannouncedObservers.values) }
        }
        var unannouncedObserverList: [@Sendable (DBusObjectPath, ManufacturerData?) -> Void] = []
        var nextObserver: UInt64 = 0
        var stopped = false
        /// While a `GetManagedObjects` is on its way: what signals changed meanwhile.
        var journal: SignalJournal?
        /// Which devices are held in full (nil: all); the rest are compact
        /// (BlueZObjectManager+Compact.swift).
        let keepsInFull: (@Sendable (ManufacturerData) -> Bool)?

        /// Brings `objects` up to date with `devices`.
        mutating func settle() { devices.settle(into: &objects) }
    }

    public let connection: DBusConnection
    let state: Mutex<State>
    private let tasks = Mutex<(signals: DBusSignalHandler?, owner: DBusSignalHandler?)>((nil, nil))
    private let loading = SnapshotLoads()

    private init(connection: DBusConnection, keepsInFull: (@Sendable (ManufacturerData) -> Bool)?) {
        self.connection = connection
        state = Mutex(State(keepsInFull: keepsInFull))
    }

    /// Subscribes, loads the tree if bluetoothd is present, and follows it from then on.
    ///
    /// Owner changes of `org.bluez` are handled synchronously on the connection's
    /// thread, in bus order with bluetoothd's own signals, so an `InterfacesAdded`
    /// from a freshly started bluetoothd is never lost to a late reset.
    ///
    /// With `keepingInFull`, a Device1 whose ManufacturerData it does not want is
    /// held compact: the tree shows only its Address, AddressType, Adapter, RSSI,
    /// ManufacturerData, Connected and ServicesResolved (BlueZObjectManager+Compact.swift).
    public static func start(
        on connection: DBusConnection, keepingInFull: (@Sendable (ManufacturerData) -> Bool)? = nil
    ) async throws -> BlueZObjectManager {
        let manager = BlueZObjectManager(connection: connection, keepsInFull: keepingInFull)
        let ownerRule = DBusMatchRule(
            sender: DBusConnection.busName, interface: DBusConnection.busInterface, member: "NameOwnerChanged",
            path: DBusConnection.busPath, arguments: [0: BlueZ.serviceName])
        let owners = try await connection.addSignalHandler(matching: ownerRule) { [weak manager] message in
            guard message.body.count == 3, case .string(let new) = message.body[2] else { return }
            manager?.ownerChanged(to: new.isEmpty ? nil : new)
        }
        let handler = try await connection.addSignalHandler(
            matching: DBusMatchRule(sender: BlueZ.serviceName),
            reader: { [weak manager] reader in manager?.apply(reader) })
        manager.tasks.withLock { $0 = (handler, owners) }
        let current = try await connection.nameOwner(of: BlueZ.serviceName)
        if let current, manager.state.withLock({ $0.owner == nil }) {
            manager.ownerChanged(to: current)
        }
        await manager.loading.wait()
        return manager
    }

    /// Stops following bluetoothd. Observers get nothing more.
    public func stop() {
        let (handler, owners) = tasks.withLock { ($0.signals, $0.owner) }
        handler?.cancel()
        owners?.cancel()
        state.withLock {
            $0.stopped = true
            $0.observers.removeAll()
            $0.advertisementObservers.removeAll()
        }
    }

    deinit {
        let (handler, owners) = tasks.withLock { ($0.signals, $0.owner) }
        handler?.cancel()
        owners?.cancel()
    }

    // MARK: Reading the tree

    /// True while bluetoothd is on the bus.
    public var isServicePresent: Bool { state.withLock { $0.owner != nil } }

    /// The unique bus name of the bluetoothd that owns org.bluez now (nil
    /// while none does): a new one each time bluetoothd starts.
    public var serviceOwner: String? { state.withLock { $0.owner } }

    /// Every object, with its interfaces.
    public var objects: [DBusObjectPath: Interfaces] {
        state.withLock { state in
            state.settle()
            return state.allObjects
        }
    }

    /// The properties of one interface of one object.
    public func properties(of path: DBusObjectPath, interface: String) -> [String: DBusValue]? {
        state.withLock { state in
            state.settle()
            return state.interfaces(of: path)?[interface]
        }
    }

    /// The objects implementing `interface`, sorted by path.
    public func objects(implementing interface: String) -> [(path: DBusObjectPath, properties: [String: DBusValue])] {
        let found = state.withLock { state -> [(path: DBusObjectPath, properties: [String: DBusValue])] in
            state.settle()
            let objects = interface == Device1.interface ? state.allObjects : state.objects
            return objects.compactMap { path, interfaces in interfaces[interface].map { (path, $0) } }
        }
        return found.sorted { $0.path < $1.path }
    }

    /// The adapters, sorted by path. Adapters whose properties cannot be read are skipped.
    public func adapters() -> [Adapter1] {
        objects(implementing: Adapter1.interface).compactMap { try? Adapter1(path: $0.path, properties: $0.properties) }
    }

    /// The adapter's `LEAdvertisingManager1` (same path), when bluetoothd offers one.
    public func advertisingManager(of adapter: DBusObjectPath) -> LEAdvertisingManager1? {
        properties(of: adapter, interface: LEAdvertisingManager1.interface)
            .flatMap { try? LEAdvertisingManager1(path: adapter, properties: $0) }
    }

    /// The devices an adapter has heard.
    public func devices(on adapter: DBusObjectPath) -> [Device1] {
        objects(implementing: Device1.interface).compactMap { entry in
            guard entry.path.isDescendant(of: adapter) else { return nil }
            return try? Device1(path: entry.path, properties: entry.properties)
        }
    }

    // MARK: Observing

    /// Calls `observer` for every later change, until the returned token is cancelled.
    public func observe(_ observer: @escaping @Sendable (Event) -> Void) -> ObserverToken {
        let id = state.withLock { state in
            state.nextObserver += 1
            state.observers[state.nextObserver] = observer
            return state.nextObserver
        }
        return ObserverToken { [weak self] in _ = self?.state.withLock { $0.observers.removeValue(forKey: id) } }
    }

    /// The changes as an asynchronous sequence.
    public func events(bufferingPolicy: AsyncStream<Event>.Continuation.BufferingPolicy = .unbounded)
        -> AsyncStream<Event>
    {
        let (stream, continuation) = AsyncStream<Event>.makeStream(bufferingPolicy: bufferingPolicy)
        let token = observe { continuation.yield($0) }
        continuation.onTermination = { _ in token.cancel() }
        return stream
    }

    private func notify(_ events: [Event]) {
        guard !events.isEmpty else { return }
        let observers = state.withLock { $0.observerList }
        for event in events {
            for observer in observers { observer(event) }
        }
    }

    private func notify(_ event: Event) {
        let observers = state.withLock { $0.observerList }
        for observer in observers { observer(event) }
    }

    // MARK: Applying changes

    /// A new owner of org.bluez (or none). Runs on the connection's thread.
    private func ownerChanged(to owner: String?) {
        let previous = state.withLock { state -> String? in
            let previous = state.owner
            guard owner != previous else { return previous }
            state.owner = owner
            state.objects.removeAll()
            state.devices.removeAll()
            return previous
        }
        guard owner != previous else { return }
        if previous != nil { notify([.serviceVanished]) }
        guard let owner else { return }
        state.withLock { $0.journal = SignalJournal() }
        loading.begin()
        Task { [weak self] in
            await self?.loadSnapshot(of: owner)
            self?.loading.end()
        }
    }

    /// Merges `GetManagedObjects` of `owner` into the tree (objects announced by
    /// signals meanwhile stay), then announces the service.
    private func loadSnapshot(of owner: String) async {
        let snapshot: [DBusObjectPath: Interfaces]
        do {
            let reply = try await connection.call(
                destination: owner, path: BlueZ.rootPath, interface: "org.freedesktop.DBus.ObjectManager",
                member: "GetManagedObjects")
            guard let value = reply.body.first, reply.body.count == 1, let parsed = Self.parseManagedObjects(value)
            else { return }
            snapshot = parsed
        } catch {
            return
        }
        let added: (events: [Event], advertisements: [DeviceAdvertisement])? = state.withLock { state in
            let journal = state.journal ?? SignalJournal()
            state.journal = nil
            guard state.owner == owner, !state.stopped else { return nil }
            state.settle()
            var events: [Event] = []
            var advertisements: [DeviceAdvertisement] = []
            for (path, interfaces) in snapshot.sorted(by: { $0.key < $1.key }) {
                var merged: Interfaces = [:]
                for (interface, properties) in interfaces {
                    // Removed by a signal since the call: the snapshot is older.
                    if journal.removed[path]?.contains(interface) == true { continue }
                    // Set by a signal since the call: the tree is at least as new.
                    var result = properties
                    let current = state.interfaces(of: path)?[interface] ?? [:]
                    for name in journal.touched[path]?[interface] ?? [] { result[name] = current[name] }
                    merged[interface] = result
                }
                guard !merged.isEmpty else { continue }
                let added = state.add(path, merged, replacing: true)
                events.append(.interfacesAdded(path, added.interfaces))
                if let advertisement = added.advertisement { advertisements.append(advertisement) }
            }
            return (events, advertisements)
        }
        guard let added else { return }
        notify(added.events + [.serviceAppeared])
        notify(added.advertisements)
    }

    /// A signal from bluetoothd, read in place. `PropertiesChanged`, which
    /// bluetoothd sends for every advertisement heard while discovering, is read
    /// straight into the change it describes (for an advertisement, into the
    /// device's record: `applyAdvertisement`); other signals are decoded whole.
    private func apply(_ reader: DBusMessageReader) {
        guard reader.isSignal(interface: "org.freedesktop.DBus.Properties", member: "PropertiesChanged"),
            reader.hasSignature("sa{sv}as")
        else {
            if let message = try? reader.decodeMessage() { apply(message) }
            return
        }
        guard let interface = reader.readString(preferring: Device1.interface) else { return }
        reader.next()
        if interface == Device1.interface, applyAdvertisement(reader) { return }
        guard let path = reader.path else { return }
        var changed: [String: DBusValue] = [:]
        reader.enter()
        while reader.typeCode == UInt8(ascii: "e") {
            reader.enter()
            guard let name = reader.readString(), reader.next(), let value = try? reader.readValue() else { return }
            if case .variant(let inner) = value { changed[name] = inner } else { changed[name] = value }
            reader.leave()
            reader.next()
        }
        reader.leave()
        reader.next()
        var invalidated: [String] = []
        reader.enter()
        while let name = reader.readString() {
            invalidated.append(name)
            reader.next()
        }
        propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated)
    }

    private func apply(_ message: DBusMessage) {
        guard let path = message.path else { return }
        switch (message.interface, message.member) {
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesAdded"):
            guard message.body.count == 2, case .objectPath(let object) = message.body[0],
                let interfaces = Self.parseInterfaces(message.body[1])
            else { return }
            let advertisement = state.withLock { state -> DeviceAdvertisement? in
                state.settle()
                for (interface, properties) in interfaces { state.journal?.set(object, interface, properties.keys) }
                return state.add(object, interfaces, replacing: false).advertisement
            }
            notify(.interfacesAdded(object, interfaces))
            if let advertisement { notify([advertisement]) }
        case ("org.freedesktop.DBus.ObjectManager", "InterfacesRemoved"):
            guard message.body.count == 2, case .objectPath(let object) = message.body[0],
                let names = message.body[1].arrayElements?.compactMap(\.string)
            else { return }
            state.withLock { state in
                for name in names { state.objects[object]?[name] = nil }
                if state.objects[object]?.isEmpty == true { state.objects[object] = nil }
                if names.contains(Device1.interface) { state.devices.refresh(object, from: state.objects) }
                state.journal?.remove(object, names)
            }
            notify(.interfacesRemoved(object, names))
        case ("org.freedesktop.DBus.Properties", "PropertiesChanged"):
            guard message.body.count == 3, case .string(let interface) = message.body[0],
                let changed = message.body[1].vardict,
                let invalidated = message.body[2].arrayElements?.compactMap(\.string)
            else { return }
            propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated)
        default:
            return
        }
    }

    private func propertiesChanged(
        _ path: DBusObjectPath, interface: String, changed: [String: DBusValue], invalidated: [String]
    ) {
        let isDevice = interface == Device1.interface
        let update = state.withLock { state -> (current: [String: DBusValue], advertisement: DeviceAdvertisement?)? in
            state.settle()
            // Through indices: the values are changed where they lie, with no
            // optional taken out of each dictionary and written back.
            let current: [String: DBusValue]
            let advertisement: DeviceAdvertisement?
            if let object = state.objects.index(forKey: path),
                let entry = state.objects.values[object].index(forKey: interface)
            {
                current = state.objects.values[object].values[entry].apply(changed: changed, invalidated: invalidated)
                advertisement = isDevice ? state.devices.refresh(path, from: state.objects) : nil
            } else if isDevice, let change = state.changeCompact(path, changed: changed, invalidated: invalidated) {
                (current, advertisement) = change
            } else {
                return nil
            }
            if state.journal != nil { state.journal?.set(path, interface, Array(changed.keys) + invalidated) }
            guard isDevice else { return (current, nil) }
            let advertised = ["RSSI", "ManufacturerData"].contains { changed[$0] != nil || invalidated.contains($0) }
            return (current, advertised ? advertisement : nil)
        }
        guard let update else { return }
        notify(.propertiesChanged(path, interface: interface, changed: changed, invalidated: invalidated, current: update.current))
        if let advertisement = update.advertisement { notify([advertisement]) }
    }
}
