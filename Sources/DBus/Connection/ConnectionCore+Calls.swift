internal import CDBus

// MARK: Method calls (loop thread)

extension ConnectionCore {
    /// Sends a method call and arranges for `completion` to get its reply.
    func startCall(
        _ message: LibDBusMessage, timeoutMilliseconds: Int32, token: CallToken,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        if token.isCancelled {
            completion(.failure(DBusError(.cancelled, "the call was cancelled")))
            return
        }
        guard let connection, dbus_connection_get_is_connected(connection) != 0 else {
            completion(.failure(DBusError(.disconnected, "the D-Bus connection is closed")))
            return
        }
        var call: OpaquePointer?
        guard dbus_connection_send_with_reply(connection, message.pointer, &call, timeoutMilliseconds) != 0,
            let call
        else {
            completion(.failure(DBusError(.disconnected, "the D-Bus connection is closed")))
            return
        }
        let pending = PendingReply(id: token.id, call: call, core: self, completion: completion)
        pendingCalls[token.id] = pending
        dbus_pending_call_set_notify(
            call,
            { _, data in
                let pending = Unmanaged<PendingReply>.fromOpaque(data!).takeUnretainedValue()
                pending.core.complete(pending)
            },
            Unmanaged.passRetained(pending).toOpaque(),
            { data in Unmanaged<PendingReply>.fromOpaque(data!).release() })
        // The reply may have arrived before the notify function was set.
        if dbus_pending_call_get_completed(call) != 0 { complete(pending) }
    }

    private func complete(_ pending: PendingReply) {
        guard pendingCalls.removeValue(forKey: pending.id) != nil else { return }
        loop.interacted()
        let result: Result<DBusMessage, DBusError>
        if let reply = dbus_pending_call_steal_reply(pending.call) {
            do {
                let message = try decoder.decode(reply)
                if let error = message.error { result = .failure(error) } else { result = .success(message) }
            } catch {
                result = .failure(DBusError(.invalidArgs, "undecodable reply: \(error)"))
            }
            dbus_message_unref(reply)
        } else {
            result = .failure(DBusError(.noReply, "no reply"))
        }
        pending.resume(result)
        // Not from inside libdbus's notify callback: release our reference on the next turn.
        let call = UncheckedPointer(pending.call)
        loop.enqueue { dbus_pending_call_unref(call.pointer) }
    }

    func cancelCall(_ id: UInt64) {
        guard let pending = pendingCalls.removeValue(forKey: id) else { return }
        dbus_pending_call_cancel(pending.call)
        pending.resume(.failure(DBusError(.cancelled, "the call was cancelled")))
        dbus_pending_call_unref(pending.call)
    }
}
