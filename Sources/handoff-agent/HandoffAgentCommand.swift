import ArgumentParser
import DBus
import Foundation
import HandoffAgent
import HandoffKit
import HandoffLogging
import Logging

@main
struct HandoffAgentCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoff-agent",
        abstract: "Show nearby Handoff activities as desktop notifications, and continue them in the right app.",
        discussion: """
            handoff-agent runs once per logged-in user, in the graphical session (the systemd user unit \
            handoff-agent.service, or the XDG autostart entry handoff-agent.desktop). It connects to handoffd \
            through HandoffKit and to the session bus.

            When another device of one of your accounts advertises an activity, it shows one notification \
            (org.freedesktop.Notifications) with the app's name and icon and the activity's title. Continue \
            fetches the activity (like `handoffctl continue ID`) and starts the app that declares the type; \
            without one, an activity with a web page opens in the browser ($BROWSER, else xdg-open).

            An app declares the types it continues in its desktop entry, in $XDG_DATA_HOME/applications or \
            $XDG_DATA_DIRS/*/applications:

                X-Handoff-ActivityTypes=org.example.reading;org.example.editing;

            The agent reads these at start and again whenever those directories change (inotify). The app \
            receives the restored activity as a private file (mode 0600, under $XDG_RUNTIME_DIR/handoff): \
            its path for %f, a file:// URI for %u or D-Bus activation, and HANDOFF_CONTINUATION_FILE in its \
            environment; HandoffKit's HandedOverActivity.claim() reads it. See docs/desktop.md.

            ENVIRONMENT
              HANDOFF_SOCKET            handoffd's socket (default /run/handoffd/handoffd.sock)
              DBUS_SESSION_BUS_ADDRESS  the session bus
              XDG_DATA_HOME, XDG_DATA_DIRS, XDG_RUNTIME_DIR
                                        where desktop entries are read and hand-overs written
              BROWSER                   browsers to try before xdg-open, as xdg-open reads it

            EXIT STATUS
              0 when stopped by SIGTERM or SIGINT; 64 for a usage error.
            """,
        version: "handoff-agent \(HandoffVersion.current)")

    @Option(name: .long, help: ArgumentHelp("handoffd's socket (default: $HANDOFF_SOCKET, else /run/handoffd/handoffd.sock).", valueName: "path"))
    var socket: String?

    @Option(name: .long, help: ArgumentHelp("The D-Bus address of the session bus (default: $DBUS_SESSION_BUS_ADDRESS).", valueName: "address"))
    var busAddress: String?

    @Flag(name: .long, help: "Read the desktop entries only at start, rather than watching their directories.")
    var noWatch = false

    @Option(name: .long, help: ArgumentHelp("How much to log: trace, debug, info, notice, warning, error, critical.", valueName: "level"))
    var logLevel: String = "info"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("--log-level: \"\(logLevel)\" is not one of trace, debug, info, notice, warning, error, critical")
        }
        if let socket, socket.isEmpty { throw ValidationError("--socket: the path is empty") }
    }

    func run() async throws {
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StderrLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "handoff-agent")
        var environment = ProcessInfo.processInfo.environment
        var bus: DBusBusAddress = .session
        if let busAddress {
            bus = .address(busAddress)
        } else if (environment["DBUS_SESSION_BUS_ADDRESS"] ?? "").isEmpty, let runtime = environment["XDG_RUNTIME_DIR"],
            FileManager.default.fileExists(atPath: runtime + "/bus")
        {
            // systemd's user bus, where the variable was not passed on.
            bus = .address("unix:path=\(runtime)/bus")
            environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(runtime)/bus"
        }
        let agent = Agent(
            configuration: .init(socketPath: socket, bus: bus, environment: environment, watchApplications: !noWatch),
            logger: logger)
        let task = Task { await agent.run() }
        let signals = SignalStop()
        await signals.wait()
        logger.notice("stopping")
        task.cancel()
        await task.value
    }
}

/// Waits for SIGTERM or SIGINT.
struct SignalStop {
    func wait() async {
        signal(SIGTERM, SIG_IGN)
        signal(SIGINT, SIG_IGN)
        let (stream, continuation) = AsyncStream.makeStream(of: Void.self)
        let sources = [SIGTERM, SIGINT].map { number -> DispatchSourceSignal in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { continuation.yield() }
            source.resume()
            return source
        }
        for await _ in stream { break }
        sources.forEach { $0.cancel() }
    }
}
