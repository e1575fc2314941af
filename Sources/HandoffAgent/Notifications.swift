import DBus
import Foundation

/// What the agent asks a notification server to show (Desktop Notifications spec 1.2).
public struct NotificationRequest: Sendable, Hashable {
    public var appName: String
    public var appIcon: String
    public var summary: String
    public var body: String
    /// Pairs of (key, label), in order.
    public var actions: [(key: String, label: String)]
    public var hints: [String: DBusValue]
    /// Milliseconds; -1 is the server's default, 0 never expires.
    public var expireTimeout: Int32

    public init(
        appName: String, appIcon: String, summary: String, body: String, actions: [(key: String, label: String)],
        hints: [String: DBusValue] = [:], expireTimeout: Int32 = 0
    ) {
        self.appName = appName
        self.appIcon = appIcon
        self.summary = summary
        self.body = body
        self.actions = actions
        self.hints = hints
        self.expireTimeout = expireTimeout
    }

    public static func == (a: Self, b: Self) -> Bool {
        a.appName == b.appName && a.appIcon == b.appIcon && a.summary == b.summary && a.body == b.body
            && a.actions.map(\.key) == b.actions.map(\.key) && a.actions.map(\.label) == b.actions.map(\.label)
            && a.hints == b.hints && a.expireTimeout == b.expireTimeout
    }

    public func hash(into hasher: inout Hasher) {
        hasher.combine(summary)
        hasher.combine(body)
    }
}

/// A signal from the notification server.
public enum NotificationSignal: Sendable, Hashable {
    case actionInvoked(id: UInt32, action: String)
    case closed(id: UInt32, reason: UInt32)
}

/// The client side of `org.freedesktop.Notifications` on a session bus.
public struct NotificationServer: Sendable {
    public static let name = "org.freedesktop.Notifications"
    public static let path: DBusObjectPath = "/org/freedesktop/Notifications"
    public static let interface = "org.freedesktop.Notifications"

    public let connection: DBusConnection

    public init(connection: DBusConnection) {
        self.connection = connection
    }

    /// `GetCapabilities`: "actions", "body-markup", …
    public func capabilities() async throws -> Set<String> {
        let reply = try await connection.call(
            destination: Self.name, path: Self.path, interface: Self.interface, member: "GetCapabilities",
            timeout: .seconds(5))
        return Set(try reply.decode([String].self))
    }

    /// `Notify`; returns the notification's id. `replacing` names one to replace atomically.
    public func notify(_ request: NotificationRequest, replacing: UInt32 = 0) async throws -> UInt32 {
        let actions = request.actions.flatMap { [$0.key, $0.label] }
        let reply = try await connection.call(
            destination: Self.name, path: Self.path, interface: Self.interface, member: "Notify",
            [
                .string(request.appName), .uint32(replacing), .string(request.appIcon), .string(request.summary),
                .string(request.body), .strings(actions), .vardict(request.hints), .int32(request.expireTimeout),
            ], timeout: .seconds(5))
        return try reply.decode(UInt32.self)
    }

    /// `CloseNotification`.
    public func close(_ id: UInt32) async throws {
        try await connection.call(
            destination: Self.name, path: Self.path, interface: Self.interface, member: "CloseNotification",
            [.uint32(id)], timeout: .seconds(5))
    }

    /// `ActionInvoked` and `NotificationClosed`, from whoever owns the name now.
    public func signals() async throws -> AsyncThrowingStream<NotificationSignal, any Error> {
        let messages = try await connection.signals(
            matching: DBusMatchRule(sender: Self.name, interface: Self.interface, path: Self.path))
        return AsyncThrowingStream { continuation in
            let task = Task {
                do {
                    for try await message in messages {
                        switch message.member {
                        case "ActionInvoked":
                            if let pair = try? message.decode(UInt32.self, String.self) {
                                continuation.yield(.actionInvoked(id: pair.0, action: pair.1))
                            }
                        case "NotificationClosed":
                            if let pair = try? message.decode(UInt32.self, UInt32.self) {
                                continuation.yield(.closed(id: pair.0, reason: pair.1))
                            }
                        default: break
                        }
                    }
                    continuation.finish()
                } catch {
                    continuation.finish(throwing: error)
                }
            }
            continuation.onTermination = { _ in task.cancel() }
        }
    }
}
