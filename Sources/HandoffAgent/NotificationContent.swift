import DBus
import DesktopEntries
import HandoffKit

/// What the notification for a nearby activity says, decided from the activity, the
/// app that declared its type and the server's capabilities (docs/desktop.md).
public enum NotificationContent {
    public static let continueLabel = "Continue"
    public static let dismissLabel = "Dismiss"

    /// Whether the activity can be continued here: an app declared its type (a desktop
    /// entry, or a running app in `hello`), or it has a web page to open.
    public static func canContinue(_ activity: NearbyActivity, app: DesktopEntry?) -> Bool {
        app != nil || activity.type != nil || activity.hasWebpageURL
    }

    /// The notification for `activity`.
    public static func request(
        for activity: NearbyActivity, app: DesktopEntry?, capabilities: Set<String>
    ) -> NotificationRequest {
        let title = activity.title.map(DisplayText.sanitized).flatMap { $0.isEmpty ? nil : $0 }
        let account = DisplayText.sanitized(activity.account)
        let type = activity.type.map(DisplayText.sanitized)
        let continuable = canContinue(activity, app: app)
        // The device's name once handoffd has met it (docs/devices.md), with the account.
        let origin = activity.deviceName.map(DisplayText.sanitized).flatMap { $0.isEmpty ? nil : "\($0) (\(account))" }
            ?? "another device of \(account)"
        var body: String
        if let app {
            body = "Continue in \(DisplayText.sanitized(app.name)), from \(origin)."
        } else if let type {
            body = "Continue \(type), from \(origin)."
        } else if activity.hasWebpageURL {
            body = "Open it in the web browser, from \(origin)."
        } else {
            body = "No app here handles this activity (from \(origin))."
        }
        let actions = capabilities.contains("actions")
        if continuable && !actions {
            body += "\nTo continue it: handoffctl continue \(activity.id)"
        }
        if capabilities.contains("body-markup") { body = DisplayText.escapedMarkup(body) }

        var hints: [String: DBusValue] = ["category": .string("x-handoff.activity")]
        var icon = ""
        if let app {
            if let appIcon = app.icon {
                icon = appIcon
                hints["image-path"] = .string(appIcon.hasPrefix("/") ? "file://" + appIcon : appIcon)
            }
            hints["desktop-entry"] = .string(app.busName)
        }
        var buttons: [(key: String, label: String)] = []
        if actions {
            if continuable {
                buttons += [("default", continueLabel), ("continue", continueLabel)]
            }
            buttons.append(("dismiss", dismissLabel))
        }
        return NotificationRequest(
            appName: app.map { DisplayText.sanitized($0.name) } ?? "Handoff", appIcon: icon,
            summary: title ?? "An activity on another device", body: body, actions: buttons, hints: hints,
            expireTimeout: 0)
    }

    /// A continuation that failed, in place of the activity's notification.
    public static func failure(
        _ message: String, for activity: NearbyActivity, app: DesktopEntry?, capabilities: Set<String>
    ) -> NotificationRequest {
        var request = Self.request(for: activity, app: app, capabilities: capabilities)
        var body = "Could not continue: \(DisplayText.sanitized(message))"
        if capabilities.contains("body-markup") { body = DisplayText.escapedMarkup(body) }
        request.body = body
        return request
    }
}
