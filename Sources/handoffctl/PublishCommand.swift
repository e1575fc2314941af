import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl publish`
struct PublishCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "publish",
        abstract: "Publish an activity, as an app would, until interrupted.",
        discussion: """
            Publishes one activity of this laptop and makes it the current one, so that handoffd \
            advertises it to your other devices. Prints the activity's id on the first line, then \
            keeps the connection to the daemon open: the activity lasts as long as this command \
            runs. Ctrl-C (or SIGTERM) invalidates it and exits with status 0; so does the end of \
            --for. Each time another device continues it, prints "Continued on device ID." (the \
            continuing device's identifier of the moment) and goes on publishing.

            userInfo is built from --info-json, then each --info key=value in order (a later key \
            replaces an earlier one). A value of true or false becomes a boolean, a value that \
            reads as a number becomes a number, anything else a string. userInfo may take at \
            most \(ProtocolLimits.maximumUserInfoBytes) bytes as compact JSON, the title \
            \(ProtocolLimits.maximumTitleBytes) bytes and the URL \(ProtocolLimits.maximumURLBytes) bytes.

            EXAMPLES
              handoffctl publish --type org.example.browser.viewing \\
                  --title 'Release notes' --url https://example.org/notes
              handoffctl publish --type org.example.editor.editing --title draft.txt \\
                  --info path=/home/me/draft.txt --info line=42 --for 5m
              handoffctl publish --type org.example.player.playing \\
                  --info-json '{"track": 7, "at": 61.5}'
            """)

    @OptionGroup var connection: ConnectionOptions

    @Option(help: ArgumentHelp("The activity type, in reverse-DNS form.", valueName: "type"))
    var type: String

    @Option(help: ArgumentHelp("The title shown on the other devices.", valueName: "text"))
    var title: String?

    @Option(help: ArgumentHelp("An http or https URL to open where no app handles the type.", valueName: "url"))
    var url: String?

    @Option(help: ArgumentHelp("A userInfo entry (repeat for more).", valueName: "key=value"))
    var info: [String] = []

    @Option(name: .customLong("info-json"), help: ArgumentHelp("userInfo as a JSON object.", valueName: "json"))
    var infoJSON: String?

    @Option(
        name: .customLong("for"),
        help: ArgumentHelp("Stop after this long: 30s, 5m, 1h, or seconds.", valueName: "duration"))
    var duration: DurationArgument?

    func validate() throws {
        guard !type.isEmpty else { throw ValidationError("--type must not be empty") }
        if let title, title.utf8.count > ProtocolLimits.maximumTitleBytes {
            throw ValidationError("--title is \(title.utf8.count) bytes; the limit is \(ProtocolLimits.maximumTitleBytes)")
        }
        if let url {
            guard let parsed = URL(string: url), ["http", "https"].contains(parsed.scheme?.lowercased() ?? ""),
                parsed.host != nil
            else {
                throw ValidationError("--url must be an http or https URL, not \(String(reflecting: url))")
            }
            if url.utf8.count > ProtocolLimits.maximumURLBytes {
                throw ValidationError("--url is \(url.utf8.count) bytes; the limit is \(ProtocolLimits.maximumURLBytes)")
            }
        }
        let size = try userInfo().map { try WireFormat.compactJSON($0).count } ?? 0
        if size > ProtocolLimits.maximumUserInfoBytes {
            throw ValidationError("userInfo is \(size) bytes as JSON; the limit is \(ProtocolLimits.maximumUserInfoBytes)")
        }
    }

    private func userInfo() throws -> [String: JSONValue]? {
        do {
            return try UserInfoArguments.build(pairs: info, json: infoJSON)
        } catch {
            throw ValidationError(error.description)
        }
    }

    func run() async throws {
        let signals = SignalWatcher()
        let connection = try await connection.connect()
        let params = PublishParams(
            type: type, title: title, userInfo: try userInfo(), webpageURL: url, expiresIn: duration?.seconds)
        let id = try await connection.publish(params).id
        Terminal.printLine(id)
        var what = type
        if let title { what += " \"\(Terminal.singleLine(title))\"" }
        if let duration { what += " for \(duration)" }
        Terminal.printLine("Publishing \(what) (Ctrl-C to stop)")

        let limit = duration?.seconds
        let stop = await withTaskGroup(of: StopReason.self) { group in
            group.addTask { await signals.next() == nil ? .cancelled : .signal }
            group.addTask {
                await connection.waitUntilClosed()
                return .daemonClosed
            }
            // Says when another device continued it (NSUserActivity's wasContinued); keeps publishing.
            group.addTask {
                for await event in connection.events where event.name == .wasContinued {
                    guard let notice = try? event.data(as: WasContinuedEvent.self), notice.id == id else { continue }
                    Terminal.printLine("Continued on device \(Terminal.singleLine(notice.byDevice)).")
                }
                // The stream ends with the connection.
                return Task.isCancelled ? .cancelled : .daemonClosed
            }
            if let limit {
                group.addTask {
                    do {
                        try await Task.sleep(for: .seconds(limit))
                        return .elapsed
                    } catch {
                        return .cancelled
                    }
                }
            }
            let first = await group.next() ?? .cancelled
            group.cancelAll()
            return first
        }
        guard stop != .daemonClosed else {
            throw CommandFailure("handoffd closed the connection, so the activity is no longer published")
        }
        try? await connection.invalidate(id: id)
        await connection.close()
        Terminal.printLine("Stopped publishing \(id).")
    }

    private enum StopReason: Sendable {
        case signal, elapsed, daemonClosed, cancelled
    }
}
