import ArgumentParser
import Foundation
import HandoffKit
import HandoffProtocol

/// `handoffctl continue`
struct ContinueCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "continue",
        abstract: "Continue an activity of another device here, and print what was restored.",
        discussion: """
            Asks handoffd to continue a nearby activity: it connects to the device the activity \
            was heard from, fetches everything its app published there (type, title, userInfo, \
            webpage URL) sealed with your account's key, checks it, and hands it over. The app \
            on the other device is told that its activity was continued.

            ID is the activity's id ("id" in 'handoffctl list --json' or 'handoffctl watch \
            --json'), or its DEVICE as 'handoffctl list' shows it.

            When an app on this laptop declared the activity's type, handoffd also hands the \
            restored activity to that app. Otherwise, an activity with a webpage URL is offered \
            as a web page: --open opens it in your browser with xdg-open. Only http and https \
            URLs are ever opened.

            Prints the type, title, webpage URL, origin device and userInfo (as indented JSON). \
            With --json, prints the data of the daemon's "continued" event unchanged, one JSON \
            object: {"activity":{…},"continuation":"…"}. Ctrl-C gives the continuation up.

            EXIT STATUS
              0  the activity was restored (and, with --open, handed to xdg-open)
              1  handoffctl could not ask: handoffd is not running, no nearby activity has
                 that ID, or the daemon refused the request
              2  a usage error
              3  out-of-range: the other device is no longer heard, or could not be reached
              4  timeout: the other device did not answer within --timeout
              5  rejected: the other device refused (the activity is no longer current
                 there, has expired, or the request failed authentication)
              6  no-handler: no app here handles the type, and it has no webpage URL
              7  payload-invalid: what arrived was invalid or incomplete, so nothing
                 was restored
              8  cancelled: interrupted (Ctrl-C), or handoffd stopped
              9  --open could not open: no webpage URL, a scheme other than http or https,
                 or xdg-open failed or is not installed
             10  streams-unsupported (not met: handoffctl never asks for a stream)
            On failure, the meaning of the code and the daemon's message are printed on \
            standard error as 'handoffctl: <message>'.

            EXAMPLES
              handoffctl list
              handoffctl continue 8c41d2f0
              handoffctl continue 8c41d2f0 --open
              handoffctl continue 5e0c1b7a --timeout 20 --json | jq .activity.userInfo
            """)

    @OptionGroup var connection: ConnectionOptions

    @Argument(help: ArgumentHelp("The nearby activity's id, or its DEVICE from 'handoffctl list'.", valueName: "id"))
    var id: String

    @Flag(help: "Print the daemon's \"continued\" data as one JSON object.")
    var json = false

    @Flag(help: "Open the activity's webpage URL with xdg-open (http and https only).")
    var open = false

    @Option(
        help: ArgumentHelp(
            "How long to wait for the other device, 1 to 60 seconds (default: 10).", valueName: "seconds"))
    var timeout: Double?

    func validate() throws {
        guard !id.isEmpty else { throw ValidationError("the ID must not be empty") }
        if let timeout, !(1...60).contains(timeout) {
            throw ValidationError("--timeout must be between 1 and 60 seconds, not \(timeout)")
        }
    }

    /// The exit status for each failure code (see the help above).
    static func exitStatus(for code: ContinueError.Code) -> Int32 {
        switch code {
        case .outOfRange: 3
        case .timeout: 4
        case .rejected: 5
        case .noHandler: 6
        case .payloadInvalid: 7
        case .cancelled: 8
        case .streamsUnsupported: 10
        }
    }

    /// The exit status when `--open` cannot open.
    static let openFailureStatus: Int32 = 9

    func run() async throws {
        let signals = SignalWatcher()
        let connection = try await connection.connect()
        let nearbyID = try await Self.resolve(id, on: connection)
        let timeout = timeout.map { Duration.milliseconds(Int64(($0 * 1000).rounded())) }
        let interactive = isatty(STDERR_FILENO) == 1

        let outcome = await withTaskGroup(of: Outcome.self) { group in
            group.addTask {
                do {
                    let event = try await connection.continueReturningEvent(nearbyID: nearbyID, timeout: timeout) { will in
                        if interactive {
                            let what = will.type.map { Terminal.singleLine($0, limit: 64) } ?? "the activity"
                            FileHandle.standardError.write(Data("Continuing \(what)…\n".utf8))
                        }
                    }
                    return .continued(event)
                } catch {
                    return .failed(error)
                }
            }
            group.addTask { await signals.next() == nil ? .failed(CancellationError()) : .interrupted }
            let first = await group.next() ?? .interrupted
            if case .interrupted = first {
                // Cancelling the continue task sends continue.cancel before it returns.
                group.cancelAll()
                _ = await group.next()
            } else {
                group.cancelAll()
            }
            return first
        }

        let event: HandoffEvent
        switch outcome {
        case .continued(let continued):
            event = continued
        case .interrupted:
            Terminal.printError("interrupted: the continuation was cancelled")
            throw ExitCode(Self.exitStatus(for: .cancelled))
        case .failed(let error as ContinueError):
            Terminal.printError(error.description)
            throw ExitCode(Self.exitStatus(for: error.code))
        case .failed(let error):
            throw error
        }

        let continued = try event.data(as: ContinuedEvent.self)
        if json {
            try JSONOutput.printValue(try event.data(as: JSONValue.self))
        } else {
            Terminal.printLine(Self.render(continued.activity))
        }
        if open {
            do {
                try await WebOpener.open(continued.activity)
            } catch let error as WebOpener.Failure {
                Terminal.printError(error.message)
                throw ExitCode(Self.openFailureStatus)
            }
        }
    }

    private enum Outcome: Sendable {
        case continued(HandoffEvent)
        case failed(any Error)
        case interrupted
    }

    /// The nearby activity's id for `text`: an id as is, or the id of the one activity
    /// whose device is `text` (as `handoffctl list` shows it). Anything else is passed
    /// on, and the daemon answers `not-found`.
    static func resolve(_ text: String, on connection: HandoffConnection) async throws -> String {
        let activities = try await connection.list().activities
        if activities.contains(where: { $0.id == text }) { return text }
        let byDevice = activities.filter { $0.device.lowercased() == text.lowercased() }
        if byDevice.count == 1 { return byDevice[0].id }
        if byDevice.count > 1 {
            throw CommandFailure(
                "device \(text) has \(byDevice.count) activities nearby; give one of their ids: "
                    + byDevice.map(\.id).joined(separator: ", "))
        }
        return text
    }

    /// Aligned `key: value` lines, then userInfo as indented JSON.
    static func render(_ activity: ContinuedActivity) -> String {
        var lines: [(String, String)] = [
            ("type", Terminal.singleLine(activity.type, limit: 255)),
            ("title", activity.title.map { Terminal.singleLine($0, limit: 256) } ?? "-"),
            ("url", activity.webpageURL.map { Terminal.singleLine($0, limit: 2048) } ?? "-"),
            ("device", "\(Terminal.singleLine(activity.device, limit: 16)) (account \(Terminal.singleLine(activity.account, limit: 64)))"),
        ]
        if let keys = activity.requiredUserInfoKeys, !keys.isEmpty {
            lines.append(("required", keys.map { Terminal.singleLine($0, limit: 64) }.joined(separator: ", ")))
        }
        let width = "userInfo:".count
        var text = lines.map { key, value in
            "\(key):".padding(toLength: width, withPad: " ", startingAt: 0) + " " + value
        }.joined(separator: "\n")
        if let userInfo = activity.userInfo, !userInfo.isEmpty {
            text += "\nuserInfo:\n" + prettyJSON(userInfo).split(separator: "\n").map { "  " + $0 }.joined(separator: "\n")
        } else {
            text += "\nuserInfo: -"
        }
        return text
    }

    /// `value` as indented JSON with sorted keys.
    static func prettyJSON(_ value: [String: JSONValue]) -> String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(value) else { return "{}" }
        return String(decoding: data, as: UTF8.self)
    }
}
