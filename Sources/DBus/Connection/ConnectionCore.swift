#if canImport(Glibc)
import Glibc
#endif
internal import CDBus
import Synchronization

/// The state of one connection, confined to its event-loop thread.
///
/// `DBusConnection` is the public face; it reaches this object only by queueing
/// jobs on `loop`. The libdbus connection, pending calls, signal subscriptions
/// and exported objects live here and are touched on the loop thread alone,
/// which is what makes the `@unchecked Sendable` sound. The few facts other
/// threads may read (connected, unique name) sit behind `shared`.
final class ConnectionCore: @unchecked Sendable {
    let loop: EventLoop
    struct Shared {
        var connected = false
        var uniqueName = ""
    }
    let shared = Mutex(Shared())

    // MARK: Loop-confined state
    // The state below is loop-confined and read per message: no run-time
    // exclusivity check (see EventLoop's loop-confined state).
    @exclusivity(unchecked) private(set) var connection: OpaquePointer?
    /// Not private: replies are decoded in ConnectionCore+Calls.swift.
    var decoder = MessageDecoder()
    /// Lent to reader subscriptions, one message at a time.
    private let reader = DBusMessageReader()
    /// Calls awaiting their reply (ConnectionCore+Calls.swift), failed on shutdown.
    var pendingCalls: [UInt64: PendingReply] = [:]
    @exclusivity(unchecked) private var subscriptions: [UInt64: Subscription] = [:] {
        didSet { subscriptionList = Array(subscriptions.values) }
    }
    /// `subscriptions.values`, kept ready: every signal walks it.
    @exclusivity(unchecked) private var subscriptionList: [Subscription] = []
    /// Owners of the well-known names used as `sender` in subscriptions.
    @exclusivity(unchecked) private var trackedNames: [String: TrackedName] = [:]
    let objects = ObjectRegistry()

    struct TrackedName {
        var owner: String?
        var references: Int
    }

    init(loop: EventLoop) {
        self.loop = loop
    }

    private let ids = Atomic<UInt64>(1)

    /// A fresh identifier for a call or subscription. Any thread.
    func makeID() -> UInt64 {
        ids.wrappingAdd(1, ordering: .relaxed).oldValue
    }

    // MARK: Setup and teardown (loop thread)

    /// Opens a private connection to `address` and registers with the bus.
    func open(address: String) throws(DBusError) -> String {
        var error = cdbus_error_make()
        defer { dbus_error_free(&error) }
        guard let conn = dbus_connection_open_private(address, &error) else {
            throw Self.error(from: &error, fallback: "cannot connect to \(address)")
        }
        dbus_connection_set_exit_on_disconnect(conn, 0)
        guard dbus_bus_register(conn, &error) != 0 else {
            let failure = Self.error(from: &error, fallback: "cannot register with the bus at \(address)")
            dbus_connection_close(conn)
            dbus_connection_unref(conn)
            throw failure
        }
        connection = conn
        let unique = String(cString: dbus_bus_get_unique_name(conn))
        shared.withLock {
            $0.connected = true
            $0.uniqueName = unique
        }
        installCallbacks(conn)
        return unique
    }

    private func installCallbacks(_ conn: OpaquePointer) {
        let context = Unmanaged.passUnretained(self).toOpaque()
        dbus_connection_set_watch_functions(
            conn,
            { watch, data in ConnectionCore.from(data).loop.addWatch(watch!); return 1 },
            { watch, data in ConnectionCore.from(data).loop.removeWatch(watch!) },
            { watch, data in ConnectionCore.from(data).loop.watchToggled(watch!) },
            context, nil)
        dbus_connection_set_timeout_functions(
            conn,
            { timeout, data in ConnectionCore.from(data).loop.addTimeout(timeout!); return 1 },
            { timeout, data in ConnectionCore.from(data).loop.removeTimeout(timeout!) },
            { timeout, data in ConnectionCore.from(data).loop.timeoutToggled(timeout!) },
            context, nil)
        dbus_connection_set_wakeup_main_function(conn, { data in ConnectionCore.from(data).loop.wake() }, context, nil)
        dbus_connection_add_filter(
            conn,
            { _, message, data in ConnectionCore.from(data).handleIncoming(message!) },
            context, nil)
        loop.onIteration = { [unowned self] in self.dispatchAll() }
    }

    static func from(_ data: UnsafeMutableRawPointer?) -> ConnectionCore {
        Unmanaged<ConnectionCore>.fromOpaque(data!).takeUnretainedValue()
    }

    static func error(from error: inout CDBus.DBusError, fallback: String) -> DBusError {
        guard dbus_error_is_set(&error) != 0, let name = error.name else {
            return DBusError(.failed, fallback)
        }
        return DBusError(name: String(cString: name), message: error.message.map { String(cString: $0) } ?? fallback)
    }

    private func dispatchAll() {
        // Re-read the pointer each time: a message handler may shut the connection down.
        while let connection, dbus_connection_dispatch(connection) == DBUS_DISPATCH_DATA_REMAINS {}
    }

    /// Closes the connection: fails what is pending, ends every stream, stops the loop.
    /// Runs once; later calls (for example the `Disconnected` message that closing
    /// itself produces) do nothing.
    func shutDown(reason: DBusError) {
        guard let connection else {
            loop.requestStop()
            return
        }
        self.connection = nil
        shared.withLock { $0.connected = false }
        for (_, pending) in pendingCalls {
            dbus_pending_call_cancel(pending.call)
            pending.resume(.failure(reason))
            dbus_pending_call_unref(pending.call)
        }
        pendingCalls.removeAll()
        for (_, subscription) in subscriptions { subscription.finish(reason) }
        subscriptions.removeAll()
        objects.removeAll()
        dbus_connection_close(connection)
        dbus_connection_unref(connection)
        loop.requestStop()
    }

    // MARK: Sending (loop thread)

    /// Sends a message that expects no reply. Returns its serial.
    @discardableResult
    func send(_ message: LibDBusMessage) throws(DBusError) -> UInt32 {
        guard let connection, dbus_connection_get_is_connected(connection) != 0 else {
            throw DBusError(.disconnected, "the D-Bus connection is closed")
        }
        var serial: UInt32 = 0
        guard dbus_connection_send(connection, message.pointer, &serial) != 0 else {
            throw DBusError(.noMemory, "out of memory queueing a message")
        }
        return serial
    }

    /// Encodes and sends a message built on the loop (replies, signals). A message
    /// that cannot be encoded or sent is dropped: there is nobody to tell.
    func emit(_ message: DBusMessage) {
        guard let encoded = try? MessageEncoder.encode(message) else { return }
        _ = try? send(encoded)
    }

    // MARK: Receiving (loop thread)

    private func handleIncoming(_ raw: OpaquePointer) -> DBusHandlerResult {
        // Replies reach this filter only when no pending call wants them (a late
        // reply to a cancelled or timed-out call): nothing to decode them for.
        let type = dbus_message_get_type(raw)
        if type == CDBUS_MESSAGE_TYPE_SIGNAL {
            return handleSignal(raw)
        }
        guard type == CDBUS_MESSAGE_TYPE_METHOD_CALL else {
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        loop.interacted()
        let message: DBusMessage
        do { message = try decoder.decode(raw) } catch {
            // A call we cannot read still gets a precise answer (libdbus itself
            // would reply UnknownMethod).
            if dbus_message_get_no_reply(raw) == 0, let connection,
                let reply = dbus_message_new_error(
                    raw, DBusError.Name.invalidArgs.rawValue, "cannot decode the arguments: \(error)")
            {
                dbus_connection_send(connection, reply, nil)
                dbus_message_unref(reply)
                return DBUS_HANDLER_RESULT_HANDLED
            }
            return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
        }
        objects.handle(message, core: self)
        return DBUS_HANDLER_RESULT_HANDLED
    }

    /// Hands a signal to the subscriptions it matches. It is decoded into a
    /// `DBusMessage` only when one of them needs that (a message handler, or a
    /// rule on arguments); reader subscriptions whose rules are on header
    /// fields alone read it in place.
    private func handleSignal(_ raw: OpaquePointer) -> DBusHandlerResult {
        // Two signals concern the connection itself. Their interfaces are told
        // apart with one look at the header: this runs for every signal.
        let interface = dbus_message_get_interface(raw)
        let isLocal = interface.map { strcmp($0, "org.freedesktop.DBus.Local") == 0 } ?? false
        let isBus = !isLocal && interface.map { Self.equal(DBusConnection.busInterface, $0) } ?? false
        if isLocal, "Disconnected".withCString({ dbus_message_is_signal(raw, "org.freedesktop.DBus.Local", $0) }) != 0 {
            shutDown(reason: DBusError(.disconnected, "the bus closed the connection"))
            return DBUS_HANDLER_RESULT_HANDLED
        }
        var decoded: DBusMessage?
        var undecodable = false
        func message() -> DBusMessage? {
            if decoded == nil && !undecodable {
                do { decoded = try decoder.decode(raw) } catch { undecodable = true }
            }
            return decoded
        }
        if isBus, dbus_message_is_signal(raw, DBusConnection.busInterface, "NameOwnerChanged") != 0,
            let message = message()
        {
            noteNameOwnerChange(message)
        }
        for subscription in subscriptionList {
            if let read = subscription.read, subscription.isHeaderOnly {
                guard headerMatches(subscription, raw) else { continue }
                reader.reset(raw)
                read(reader)
                reader.clear()
                continue
            }
            // The header first: most rules turn most signals away there, undecoded.
            guard headerMatches(subscription, raw), let message = message(),
                subscription.rule.matches(message, ownerOf: owner(of:))
            else { continue }
            if let deliver = subscription.deliver {
                deliver(message)
            } else if let read = subscription.read {
                reader.reset(raw)
                read(reader)
                reader.clear()
            }
        }
        return undecodable ? DBUS_HANDLER_RESULT_NOT_YET_HANDLED : DBUS_HANDLER_RESULT_HANDLED
    }

    /// `DBusMatchRule.matches` for a rule on header fields only, read from
    /// libdbus's copy of the message without decoding it.
    private func headerMatches(_ subscription: Subscription, _ raw: OpaquePointer) -> Bool {
        if let type = subscription.rule.type, type != .signal { return false }
        if let wanted = subscription.rule.sender {
            guard let actual = dbus_message_get_sender(raw) else { return false }
            if !Self.equal(wanted, actual) {
                guard subscription.sendsThroughOwner, let owner = owner(of: wanted), Self.equal(owner, actual) else {
                    return false
                }
            }
        }
        if let interface = subscription.rule.interface {
            guard let actual = dbus_message_get_interface(raw), Self.equal(interface, actual) else { return false }
        }
        if let member = subscription.rule.member {
            guard let actual = dbus_message_get_member(raw), Self.equal(member, actual) else { return false }
        }
        if let path = subscription.rule.path {
            guard let actual = dbus_message_get_path(raw), Self.equal(path.rawValue, actual) else { return false }
        }
        if let namespace = subscription.rule.pathNamespace {
            guard let actual = dbus_message_get_path(raw) else { return false }
            let messagePath = DBusObjectPath(validated: String(cString: actual))
            guard messagePath == namespace || messagePath.isDescendant(of: namespace) else { return false }
        }
        if let destination = subscription.rule.destination {
            guard let actual = dbus_message_get_destination(raw), Self.equal(destination, actual) else {
                return false
            }
        }
        return true
    }

    private static func equal(_ string: String, _ cString: UnsafePointer<CChar>) -> Bool {
        string.withCString { strcmp($0, cString) == 0 }
    }

    // MARK: Subscriptions (loop thread)

    func addSubscription(_ id: UInt64, _ subscription: Subscription) {
        subscriptions[id] = subscription
    }

    @discardableResult
    func removeSubscription(_ id: UInt64) -> Subscription? {
        subscriptions.removeValue(forKey: id)
    }

    // MARK: Well-known name owners (loop thread)

    /// Starts tracking `name`. Returns true when the caller must look up the current owner.
    func retainTrackedName(_ name: String) -> Bool {
        if trackedNames[name] != nil {
            trackedNames[name]!.references += 1
            return false
        }
        trackedNames[name] = TrackedName(owner: nil, references: 1)
        return true
    }

    /// Stops tracking `name` when its last user goes. Returns true when it was the last.
    func releaseTrackedName(_ name: String) -> Bool {
        guard var tracked = trackedNames[name] else { return false }
        tracked.references -= 1
        if tracked.references <= 0 {
            trackedNames[name] = nil
            return true
        }
        trackedNames[name] = tracked
        return false
    }

    func setOwner(_ owner: String?, of name: String) {
        trackedNames[name]?.owner = owner
    }

    private func owner(of name: String) -> String? {
        trackedNames[name]?.owner
    }

    private func noteNameOwnerChange(_ message: DBusMessage) {
        guard message.member == "NameOwnerChanged", message.sender == DBusConnection.busName,
            message.interface == DBusConnection.busInterface, message.body.count == 3,
            case .string(let name) = message.body[0], case .string(let newOwner) = message.body[2],
            trackedNames[name] != nil
        else { return }
        trackedNames[name]!.owner = newOwner.isEmpty ? nil : newOwner
    }
}
