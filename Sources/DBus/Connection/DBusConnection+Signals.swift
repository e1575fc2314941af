extension DBusConnection {
    /// The signals matching `rule`, as an asynchronous sequence.
    ///
    /// The rule is added to the bus (`AddMatch`) before this returns, so no
    /// matching signal sent afterwards is missed. Ending the iteration (or
    /// dropping the sequence) removes the rule again. The sequence finishes with
    /// `…Disconnected` when the connection closes.
    ///
    /// A rule whose `sender` is a well-known name (such as `org.bluez`) delivers
    /// only what that name's current owner sends; the connection follows the
    /// name's owner as it changes.
    public func signals(
        matching rule: DBusMatchRule,
        bufferingPolicy: AsyncThrowingStream<DBusMessage, Error>.Continuation.BufferingPolicy = .unbounded
    ) async throws -> AsyncThrowingStream<DBusMessage, Error> {
        let (stream, continuation) = AsyncThrowingStream<DBusMessage, Error>.makeStream(
            bufferingPolicy: bufferingPolicy)
        let handler = try await addSignalHandler(
            matching: rule,
            { message in continuation.yield(message) },
            onFinish: { error in continuation.finish(throwing: error) })
        continuation.onTermination = { _ in handler.cancel() }
        return stream
    }

    /// Calls `handler` for every signal matching `rule`, synchronously on the
    /// connection's own thread, in the order the bus delivered them.
    ///
    /// This is the cheapest way to follow a busy signal source: no task hop per
    /// signal. The handler must be quick and must never block or wait on this
    /// connection. `onFinish` runs once if the connection closes. Cancel the
    /// returned handle to remove the rule.
    public func addSignalHandler(
        matching rule: DBusMatchRule,
        _ handler: @escaping @Sendable (DBusMessage) -> Void,
        onFinish: @escaping @Sendable (DBusError) -> Void = { _ in }
    ) async throws -> DBusSignalHandler {
        try await addSubscription(rule, .init(rule: rule, deliver: handler, finish: onFinish))
    }

    /// Like `addSignalHandler(matching:_:onFinish:)`, but `handler` reads each
    /// signal in place through a `DBusMessageReader` instead of receiving a
    /// decoded `DBusMessage`: for signals that arrive at bus rate and of which
    /// the handler needs a few fields. The reader is valid only during the call.
    /// When the rule matches on arguments the signal is decoded anyway, to match it.
    public func addSignalHandler(
        matching rule: DBusMatchRule,
        reader handler: @escaping @Sendable (DBusMessageReader) -> Void,
        onFinish: @escaping @Sendable (DBusError) -> Void = { _ in }
    ) async throws -> DBusSignalHandler {
        try await addSubscription(rule, .init(rule: rule, read: handler, finish: onFinish))
    }

    private func addSubscription(_ rule: DBusMatchRule, _ subscription: ConnectionCore.Subscription) async throws
        -> DBusSignalHandler
    {
        let handler = subscription
        try rule.validate()
        let trackedSender = rule.sender.flatMap { $0.hasPrefix(":") || $0 == Self.busName ? nil : $0 }
        if let trackedSender { try await trackOwner(of: trackedSender) }
        let id = core.makeID()
        do {
            try await onLoop { core in
                core.addSubscription(id, handler)
            }
            try await callBus("AddMatch", [.string(rule.text)])
        } catch {
            _ = try? await onLoop { core in core.removeSubscription(id) }
            if let trackedSender { untrackOwner(of: trackedSender) }
            throw error
        }
        return DBusSignalHandler(core: core, id: id, ruleText: rule.text, trackedSender: trackedSender)
    }

    /// The owner of `name` now and after every change: a unique name, or nil
    /// while nobody owns it. Consecutive repeats are left out.
    ///
    /// This is how to notice a service such as bluetoothd going away and coming back.
    public func nameOwnerChanges(of name: String) async throws -> AsyncThrowingStream<String?, Error> {
        guard DBusNames.isValidBusName(name) else { throw DBusError(.invalidArgs, "invalid bus name '\(name)'") }
        let changes = try await signals(matching: Self.ownerRule(name))
        let initial = try await nameOwner(of: name)
        let (stream, continuation) = AsyncThrowingStream<String?, Error>.makeStream()
        continuation.yield(initial)
        let task = Task {
            var last = initial
            do {
                for try await message in changes {
                    guard message.body.count == 3, case .string(let new) = message.body[2] else { continue }
                    let owner = new.isEmpty ? nil : new
                    if owner != last {
                        continuation.yield(owner)
                        last = owner
                    }
                }
                continuation.finish()
            } catch {
                continuation.finish(throwing: error)
            }
        }
        continuation.onTermination = { _ in task.cancel() }
        return stream
    }

    static func ownerRule(_ name: String) -> DBusMatchRule {
        DBusMatchRule(
            sender: busName, interface: busInterface, member: "NameOwnerChanged", path: busPath, arguments: [0: name])
    }

    /// Starts following the owner of `name` so that rules naming it as sender match locally.
    private func trackOwner(of name: String) async throws {
        let mustLookUp = try await onLoop { core in core.retainTrackedName(name) }
        guard mustLookUp else { return }
        do {
            try await callBus("AddMatch", [.string(Self.ownerRule(name).text)])
            let owner = try await nameOwner(of: name)
            try await onLoop { core in core.setOwner(owner, of: name) }
        } catch {
            untrackOwner(of: name)
            throw error
        }
    }

    private func untrackOwner(of name: String) {
        let core = self.core
        core.loop.enqueue {
            if core.releaseTrackedName(name) {
                core.emit(Self.busCall("RemoveMatch", [.string(Self.ownerRule(name).text)], noReply: true))
            }
        }
    }
}

/// A subscription made with `DBusConnection.addSignalHandler`. Cancel it to
/// remove the match rule; cancelling twice does nothing.
public final class DBusSignalHandler: Sendable {
    private let core: ConnectionCore
    private let id: UInt64
    private let ruleText: String
    private let trackedSender: String?

    init(core: ConnectionCore, id: UInt64, ruleText: String, trackedSender: String?) {
        self.core = core
        self.id = id
        self.ruleText = ruleText
        self.trackedSender = trackedSender
    }

    /// Stops delivery and removes the rule from the bus.
    public func cancel() {
        let (core, id, ruleText, trackedSender) = (self.core, self.id, self.ruleText, self.trackedSender)
        core.loop.enqueue {
            guard core.removeSubscription(id) != nil else { return }
            core.emit(DBusConnection.busCall("RemoveMatch", [.string(ruleText)], noReply: true))
            if let trackedSender, core.releaseTrackedName(trackedSender) {
                core.emit(
                    DBusConnection.busCall(
                        "RemoveMatch", [.string(DBusConnection.ownerRule(trackedSender).text)], noReply: true))
            }
        }
    }
}
