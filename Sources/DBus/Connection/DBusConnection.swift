#if canImport(Glibc)
import Glibc
#endif
internal import CDBus
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A connection to a D-Bus message bus.
///
/// Each connection runs its own event-loop thread, driven by libdbus's watch
/// and timeout functions: it wakes only when the bus sends something, when a
/// libdbus timeout falls due, or when a task hands it work. Every method is
/// safe to call from any task.
///
///     let bus = try await DBusConnection.connect(to: .system)
///     let reply = try await bus.call(
///         destination: "org.bluez", path: "/", interface: "org.freedesktop.DBus.ObjectManager",
///         member: "GetManagedObjects")
///
/// Closing (or dropping the last reference) fails pending calls with
/// `org.freedesktop.DBus.Error.Disconnected`, finishes every signal stream and
/// stops the thread.
public final class DBusConnection: Sendable {
    /// The bus's own name, path and interface.
    public static let busName = "org.freedesktop.DBus"
    public static let busPath: DBusObjectPath = "/org/freedesktop/DBus"
    public static let busInterface = "org.freedesktop.DBus"

    /// The default method-call timeout, libdbus's own default.
    public static let defaultTimeout: Duration = .seconds(25)

    let core: ConnectionCore
    /// The unique name the bus gave this connection, such as `:1.42`.
    public let uniqueName: String

    private init(core: ConnectionCore, uniqueName: String) {
        self.core = core
        self.uniqueName = uniqueName
    }

    deinit {
        let core = self.core
        core.loop.enqueue { core.shutDown(reason: DBusError(.disconnected, "the connection was released")) }
    }

    /// Connects to a bus and registers with it (`Hello`).
    /// - Throws: `DBusError`, for example `org.freedesktop.DBus.Error.FileNotFound` when no bus listens there.
    public static func connect(to bus: DBusBusAddress = .system) async throws -> DBusConnection {
        let address = try bus.resolve(environment: ProcessInfo.processInfo.environment)
        dbus_threads_init_default()
        let loop = try EventLoop()
        let core = ConnectionCore(loop: loop)
        let uniqueName: String = try await withCheckedThrowingContinuation { continuation in
            do {
                try loop.start {
                    do {
                        continuation.resume(returning: try core.open(address: address))
                    } catch {
                        loop.requestStop()
                        continuation.resume(throwing: error)
                    }
                }
            } catch {
                continuation.resume(throwing: error)
            }
        }
        return DBusConnection(core: core, uniqueName: uniqueName)
    }

    /// Lets the connection's thread gather messages that stream in: after a wake
    /// that came within two windows of the wake before it, the thread reads until
    /// the socket is drained, then waits until `window` has passed since that wake
    /// before it reads again, and then reads and dispatches everything that
    /// arrived meanwhile in one go. A message that comes alone is read at once,
    /// and so is everything within two windows of an interactive use of the
    /// connection (work queued from a task, such as a call or a message sent; a
    /// method call received; a reply that completed a call), so an exchange of
    /// calls and replies never waits. In a stream of signals alone (bluetoothd's
    /// advertisements in a busy room) each message may wait up to `window`, and
    /// the thread wakes once per window rather than once per message. Zero (the
    /// default) turns it off.
    public func batchInput(within window: Duration) {
        let (seconds, attoseconds) = window.components
        let nanoseconds = UInt64(max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000))
        let loop = core.loop
        loop.enqueue { loop.setBatchWindow(nanoseconds: nanoseconds) }
    }

    /// Times a socket had input for the connection's thread since it started
    /// (what `batchInput(within:)` makes fewer).
    var inputWakes: UInt64 {
        get async { await onLoop { $0.inputWakes } }
    }

    /// Times the connection's thread waited to gather input (`batchInput(within:)`).
    var inputGathers: UInt64 {
        get async { await onLoop { $0.gathers } }
    }

    private func onLoop(_ read: @escaping @Sendable (EventLoop) -> UInt64) async -> UInt64 {
        let loop = core.loop
        return await withCheckedContinuation { continuation in
            if !loop.enqueue({ continuation.resume(returning: read(loop)) }) { continuation.resume(returning: 0) }
        }
    }

    /// False once the connection was closed, locally or by the bus.
    public var isConnected: Bool { core.shared.withLock { $0.connected } }

    /// Closes the connection and waits for its thread to finish.
    public func close() async {
        let core = self.core
        core.loop.enqueue { core.shutDown(reason: DBusError(.disconnected, "the connection was closed")) }
        await core.loop.waitUntilExited()
    }

    /// Waits until the connection closes, for whatever reason.
    public func waitUntilClosed() async {
        await core.loop.waitUntilExited()
    }

    // MARK: Method calls

    /// Calls a method and waits for its reply.
    /// - Returns: the reply message; decode its body with `decode(_:)`.
    /// - Throws: `DBusError` carrying the peer's error name and message (for example
    ///   `org.bluez.Error.NotPermitted`), `…NoReply` on timeout, `…Disconnected`,
    ///   `…Cancelled` when the task is cancelled, or `…InvalidArgs` for arguments
    ///   D-Bus cannot carry.
    @discardableResult
    public func call(
        destination: String?, path: DBusObjectPath, interface: String?, member: String, _ body: [DBusValue] = [],
        timeout: Duration = DBusConnection.defaultTimeout
    ) async throws -> DBusMessage {
        try await call(
            .methodCall(destination: destination, path: path, interface: interface, member: member, body: body),
            timeout: timeout)
    }

    /// Sends a prepared method call and waits for its reply.
    @discardableResult
    public func call(_ message: DBusMessage, timeout: Duration = DBusConnection.defaultTimeout) async throws
        -> DBusMessage
    {
        guard message.kind == .methodCall, !message.noReplyExpected else {
            throw DBusError(.invalidArgs, "call() needs a method call that expects a reply")
        }
        let encoded = try MessageEncoder.encode(message)
        let core = self.core
        let token = CallToken(id: core.makeID())
        let milliseconds = Self.milliseconds(timeout)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<DBusMessage, Error>) in
                let accepted = core.loop.enqueue {
                    core.startCall(encoded, timeoutMilliseconds: milliseconds, token: token) { result in
                        continuation.resume(with: result.mapError { $0 as Error })
                    }
                }
                if !accepted {
                    continuation.resume(throwing: DBusError(.disconnected, "the D-Bus connection is closed"))
                }
            }
        } onCancel: {
            token.cancel()
            core.loop.enqueue { core.cancelCall(token.id) }
        }
    }

    /// Sends a message without waiting for anything: a signal, or a call with
    /// `noReplyExpected`.
    /// - Throws: `DBusError` when the message is invalid or the connection is closed.
    public func send(_ message: DBusMessage) throws {
        let encoded = try MessageEncoder.encode(message)
        let core = self.core
        guard core.loop.enqueue({ _ = try? core.send(encoded) }) else {
            throw DBusError(.disconnected, "the D-Bus connection is closed")
        }
    }

    /// Sends several messages without waiting for anything, in order, with one
    /// hand-over to the connection's thread: cheaper than a `send` each for a
    /// burst. Nothing is sent if one of them cannot be encoded.
    /// - Throws: `DBusError` when a message is invalid or the connection is closed.
    public func send(contentsOf messages: [DBusMessage]) throws {
        let encoded = try messages.map { try MessageEncoder.encode($0) }
        let core = self.core
        guard core.loop.enqueue({ for message in encoded { _ = try? core.send(message) } }) else {
            throw DBusError(.disconnected, "the D-Bus connection is closed")
        }
    }

    /// Emits a signal from `path`.
    public func emitSignal(
        path: DBusObjectPath, interface: String, member: String, _ body: [DBusValue] = [], destination: String? = nil
    ) throws {
        var message = DBusMessage.signal(path: path, interface: interface, member: member, body: body)
        message.destination = destination
        try send(message)
    }

    /// Runs `body` on the connection's thread and returns its result.
    /// Runs `job` on the connection's own thread once `delay` has passed, in
    /// turn with the signal handlers (see `addSignalHandler`), so it must be as
    /// quick as they are. The thread wakes for it only when nothing else wakes it
    /// first. If the connection closes before then, the job runs as it closes.
    /// - Returns: false when the connection is closed and the job will never run.
    @discardableResult
    public func schedule(after delay: Duration, _ job: @escaping @Sendable () -> Void) -> Bool {
        core.loop.enqueue(after: delay, job)
    }

    func onLoop<T: Sendable>(_ body: @escaping @Sendable (ConnectionCore) throws -> T) async throws -> T {
        let core = self.core
        return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, Error>) in
            let accepted = core.loop.enqueue {
                continuation.resume(with: Result { try body(core) })
            }
            if !accepted { continuation.resume(throwing: DBusError(.disconnected, "the D-Bus connection is closed")) }
        }
    }

    /// The timeout in libdbus's terms: at least 1 ms, and at most `Int32.max`, which
    /// libdbus takes as "no timeout". Never traps, however large the duration.
    static func milliseconds(_ duration: Duration) -> Int32 {
        let (seconds, attoseconds) = duration.components
        let (scaled, overflow) = seconds.multipliedReportingOverflow(by: 1000)
        let (ms, carry) = scaled.addingReportingOverflow(attoseconds / 1_000_000_000_000_000)
        if overflow || carry { return seconds < 0 ? 1 : .max }
        return Int32(clamping: max(1, ms))
    }
}
