import ArgumentParser
import BlueZ
import DBus
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffDaemon
import HandoffLogging
import Logging
import ServiceLifecycle

/// The handoff daemon.
@main
struct Handoffd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "handoffd",
        abstract: "Apple-style Handoff for Linux: advertise the current activity over BLE and find your other laptops'.",
        discussion: """
            handoffd talks to bluetoothd over D-Bus. It broadcasts an encrypted, rotating beacon for the \
            activity an app on this machine made current, scans for the beacons of your other devices that \
            share an account key, and serves local apps and handoffctl over a Unix socket.

            It normally runs as the systemd service handoffd.service. Settings come from \
            /etc/handoffd/handoffd.toml; the options below override them (the demo and the tests use them).

            Signals: SIGTERM and SIGINT shut down cleanly (the advertisement is unregistered, discovery \
            stopped, the socket removed); SIGHUP reloads the configuration and the account keys.

            Examples:
              handoffd --check-config
              handoffd --config ./handoffd.toml --log-level debug
            """,
        version: "handoffd \(HandoffDaemon.version)")

    @Option(name: .long, help: ArgumentHelp("Read settings from this file.", valueName: "path"))
    var config: String?

    @Option(name: .long, help: ArgumentHelp("The D-Bus to use: system, session, or an address.", valueName: "bus"))
    var bus: String?

    @Option(name: .long, help: ArgumentHelp("Serve clients on this Unix socket.", valueName: "path"))
    var socket: String?

    @Option(name: .long, help: ArgumentHelp("Keep account keys in this directory.", valueName: "dir"))
    var accounts: String?

    @Option(name: .long, help: ArgumentHelp("Use this adapter: auto, a name such as hci0, or an address.", valueName: "adapter"))
    var adapter: String?

    @Option(name: .long, help: ArgumentHelp("Rotate the beacon every this many seconds.", valueName: "seconds"))
    var epochSeconds: UInt32?

    @Option(name: .long, help: ArgumentHelp("Forget a nearby activity this many seconds after it was last heard.", valueName: "seconds"))
    var expirySeconds: Int?

    @Option(name: .long, help: ArgumentHelp("Log at this level and above: trace, debug, info, notice, warning, error.", valueName: "level"))
    var logLevel: Logger.Level?

    @Flag(name: .long, help: "Check the configuration, print it and exit.")
    var checkConfig = false

    /// The overrides get the file's limits for the epoch (a zero epoch would stop the
    /// daemon on a precondition); the expiry may go below the file's 15 s (tests use it),
    /// but not below a second.
    func validate() throws {
        let epochs = ConfigurationLimits.epochSeconds
        if let epochSeconds, !epochs.contains(Int(epochSeconds)) {
            throw ValidationError("--epoch-seconds must be \(epochs.lowerBound) to \(epochs.upperBound), not \(epochSeconds)")
        }
        if let expirySeconds, expirySeconds < 1 {
            throw ValidationError("--expiry-seconds must be at least 1, not \(expirySeconds)")
        }
    }

    func run() async throws {
        let configurationPath = config
        var configuration: DaemonConfiguration
        do {
            configuration = try DaemonConfiguration.load(from: configurationPath)
        } catch {
            throw ValidationError("\(error)")
        }
        let overrides = self.overrides()
        overrides(&configuration)
        if checkConfig {
            print("configuration OK: \(configurationPath ?? DaemonConfiguration.defaultPath)")
            return
        }
        let level = configuration.logLevel
        LoggingSystem.bootstrap { label in
            var handler = StderrLogHandler(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "handoffd")
        let service = HandoffService(
            configuration: configuration, configurationPath: configurationPath, overrides: overrides, logger: logger)
        do {
            try await service.makeGroup().run()
        } catch {
            logger.critical("\(error)")
            throw ExitCode.failure
        }
        logger.notice("handoffd stopped")
    }

    /// Command-line settings, applied over the file (and again after a reload).
    func overrides() -> @Sendable (inout DaemonConfiguration) -> Void {
        let (bus, socket, accounts, adapter, epoch, expiry, level) =
            (self.bus, self.socket, self.accounts, self.adapter, epochSeconds, expirySeconds, logLevel)
        return { configuration in
            if let bus {
                configuration.bus =
                    switch bus {
                    case "system": .system
                    case "session": .session
                    default: .address(bus)
                    }
            }
            if let socket { configuration.socketPath = socket }
            if let accounts { configuration.accountsDirectory = accounts }
            if let adapter { configuration.adapter = AdapterSelector(adapter) }
            if let epoch { configuration.epochSeconds = epoch }
            if let expiry { configuration.nearbyExpiry = .seconds(expiry) }
            if let level { configuration.logLevel = level }
        }
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}

