import ArgumentParser
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

              DEVICE     the origin device's short identifier (it changes as it rotates)
              ACCOUNT    the account the device shares with this laptop
              TYPE       the activity type, or "unknown type (hash …)" when no app on this
                         laptop declared it
              TITLE      the activity's title, or "-" until it is known
              RSSI       the smoothed signal strength in dBm, or "-"
              LAST SEEN  how long ago a beacon for it was heard

            With --json, prints the daemon's "list" result unchanged: one JSON object with an \
            "activities" array, as described in docs/protocol.md.

            EXAMPLES
              handoffctl list
              handoffctl list --json | jq -r '.activities[].title'
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print the daemon's result as one JSON object.")
    var json = false

    func run() async throws {
        let connection = try await connection.connect()
        if json {
            try await JSONOutput.printResult(of: .list, EmptyParams(), on: connection)
            return
        }
        let activities = try await connection.list().activities
        Terminal.printLine(Self.render(activities, now: Date()))
    }

    /// The table, or a sentence when there is nothing to show.
    static func render(_ activities: [NearbyActivity], now: Date) -> String {
        guard !activities.isEmpty else { return "No nearby activities." }
        var table = Table("DEVICE", "ACCOUNT", "TYPE", "TITLE", "RSSI", "LAST SEEN")
        for activity in activities.sorted(by: { $0.lastSeen > $1.lastSeen }) {
            table.append([
                String(activity.device.prefix(8)),
                Terminal.singleLine(activity.account, limit: 24),
                typeDescription(activity),
                activity.title.map { Terminal.singleLine($0) } ?? "-",
                activity.rssi.map { "\(Int($0.rounded())) dBm" } ?? "-",
                RelativeTime.ago(activity.lastSeen, now: now),
            ])
        }
        return table.rendered
    }

    /// The type, or what is known about it.
    static func typeDescription(_ activity: NearbyActivity) -> String {
        activity.type.map { Terminal.singleLine($0, limit: 64) } ?? "unknown type (hash \(activity.typeHash))"
    }
}
