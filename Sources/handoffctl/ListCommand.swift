import ArgumentParser
import DesktopEntries
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl list`
struct ListCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "Show the activities your other devices advertise nearby.",
        discussion: """
            Prints one row per activity that handoffd hears from another device of one of your \
            accounts, most recently seen first:

              DEVICE     the origin device's name once this laptop has met it (see handoffctl
                         devices), else its short identifier (which changes as it rotates)
              ACCOUNT    the account the device shares with this laptop
              APP        the app that continues it here: the Name of the desktop entry whose
                         X-Handoff-ActivityTypes declares its type, or "-"
              TYPE       the activity type, or "unknown type (hash …)" when no app on this
                         laptop declared it
              TITLE      the activity's title, or "-" until it is known
              RSSI       the smoothed signal strength in dBm, or "-"
              LAST SEEN  how long ago a beacon for it was heard

            APP and TITLE are left out when no row has one. Desktop entries are read from \
            $XDG_DATA_HOME/applications and $XDG_DATA_DIRS/*/applications, as handoff-agent \
            reads them (docs/desktop.md).

            With --json, prints the daemon's "list" result (one JSON object with an "activities" \
            array, as described in docs/protocol.md), where each activity whose type a desktop \
            entry declares also has "app": {"name": …, "desktopEntry": …} (the desktop-file ID \
            without ".desktop").

            EXAMPLES
              handoffctl list
              handoffctl list --json | jq -r '.activities[] | .app.name // .type'
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the daemon's result as one JSON object, with the apps added.")
    var json = false

    func run() async throws {
        let connection = try await connection.connect()
        let apps = Self.installedApps()
        if json {
            let result = try await connection.request(.list, EmptyParams(), as: JSONValue.self)
            try JSONOutput.printValue(Self.withApps(result, apps))
            return
        }
        let activities = try await connection.list().activities
        Terminal.printLine(Self.render(activities, apps: apps, now: Date()))
    }

    /// The app for each activity type that this user's desktop entries declare.
    static func installedApps(environment: [String: String] = ProcessInfo.processInfo.environment) -> [String: DesktopEntry] {
        let directories = XDGDirectories(environment: environment)
        return ApplicationIndex(directories: directories.applicationDirectories, path: environment["PATH"]).byType
    }

    /// The table, or a sentence when there is nothing to show.
    static func render(_ activities: [NearbyActivity], apps: [String: DesktopEntry], now: Date) -> String {
        guard !activities.isEmpty else { return "No nearby activities." }
        let appNames = activities.map { activity in activity.type.flatMap { apps[$0] }.map { Terminal.singleLine($0.name, limit: 32) } }
        let showApps = appNames.contains { $0 != nil }
        let showTitles = activities.contains { $0.title != nil }
        var header = ["DEVICE", "ACCOUNT"]
        if showApps { header.append("APP") }
        header.append("TYPE")
        if showTitles { header.append("TITLE") }
        header += ["RSSI", "LAST SEEN"]
        var table = Table(header: header)
        for (activity, app) in zip(activities, appNames).sorted(by: { $0.0.lastSeen > $1.0.lastSeen }) {
            var row = [deviceDescription(activity), Terminal.singleLine(activity.account, limit: 24)]
            if showApps { row.append(app ?? "-") }
            row.append(typeDescription(activity))
            if showTitles { row.append(activity.title.map { Terminal.singleLine($0) } ?? "-") }
            row += [activity.rssi.map { "\(Int($0.rounded())) dBm" } ?? "-", RelativeTime.ago(activity.lastSeen, now: now)]
            table.append(row)
        }
        return table.rendered
    }

    /// The origin device's name, or its per-epoch identifier while the name is not known.
    static func deviceDescription(_ activity: NearbyActivity) -> String {
        activity.deviceName.map { Terminal.singleLine($0, limit: 24) } ?? String(activity.device.prefix(8))
    }

    /// The type, or what is known about it.
    static func typeDescription(_ activity: NearbyActivity) -> String {
        activity.type.map { Terminal.singleLine($0, limit: 64) } ?? "unknown type (hash \(activity.typeHash))"
    }

    /// The daemon's `list` result with `"app"` added to each activity whose type `apps` declares.
    static func withApps(_ result: JSONValue, _ apps: [String: DesktopEntry]) -> JSONValue {
        guard case .object(var object) = result, case .array(let activities)? = object["activities"] else { return result }
        object["activities"] = .array(
            activities.map { activity in
                guard case .object(var fields) = activity, case .string(let type)? = fields["type"], let app = apps[type]
                else { return activity }
                fields["app"] = .object(["name": .string(app.name), "desktopEntry": .string(app.busName)])
                return .object(fields)
            })
        return .object(object)
    }
}
