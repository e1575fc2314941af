import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl watch`
struct WatchCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch",
        abstract: "Print nearby activities as they appear, change and disappear.",
        discussion: """
            Subscribes to the daemon's events and prints one line per event until interrupted \
            (Ctrl-C): the local time, the event (appeared, updated or lost), the origin device, \
            the activity type and, once known, the title.

            With --json, prints each event frame exactly as the daemon sent it, one JSON object \
            per line: {"data":{"activity":{…}},"event":"appeared"}.

            The command exits with status 0 when interrupted, and 1 when the daemon goes away.

            EXAMPLES
              handoffctl watch
              handoffctl watch --type org.example.browser.viewing
              handoffctl watch --json | jq -r '.data.activity.title'
            """)

    @OptionGroup var connection: ConnectionOptions

    @Flag(help: "Print each event frame as one JSON object per line.")
    var json = false

    @Option(
        name: .customLong("type"),
        help: ArgumentHelp("Only events for this activity type (repeat for more).", valueName: "type"))
    var types: [String] = []

    func run() async throws {
        let signals = SignalWatcher()
        let connection = try await connection.connect(handles: types)
        try await connection.subscribe(types: types.isEmpty ? nil : types)
        let json = json
        let interrupted = await withTaskGroup(of: Bool.self) { group in
            group.addTask {
                for await event in connection.events {
                    Terminal.printLine(json ? String(decoding: event.line, as: UTF8.self) : Self.describe(event, at: Date()))
                }
                return false
            }
            group.addTask { await signals.next() != nil }
            let first = await group.next() ?? false
            group.cancelAll()
            return first
        }
        if !interrupted { throw HandoffClientError.connectionClosed }
    }

    private static let clock: DateFormatter = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "HH:mm:ss"
        return formatter
    }()

    /// One human-readable line for `event`.
    static func describe(_ event: HandoffEvent, at time: Date) -> String {
        let name = event.name.rawValue.padding(toLength: 8, withPad: " ", startingAt: 0)
        guard let activity = try? event.nearbyActivity() else {
            return "\(clock.string(from: time))  \(name)"
        }
        var line = "\(clock.string(from: time))  \(name)  \(ListCommand.deviceDescription(activity))  \(ListCommand.typeDescription(activity))"
        if let title = activity.title { line += "  \"\(Terminal.singleLine(title))\"" }
        return line
    }
}
