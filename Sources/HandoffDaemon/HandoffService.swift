import BlueZ
import DBus
import Foundation
import HandoffProtocol
import Logging
import ServiceLifecycle
import UnixSignals

/// handoffd as a swift-service-lifecycle `Service`: connects to the bus,
/// starts the radio, the daemon core and the socket server, tells systemd
/// when it is ready, reloads on SIGHUP, and on graceful shutdown (SIGTERM,
/// SIGINT) unregisters the advertisement, stops discovery, says goodbye to
/// clients and removes the socket.
public struct HandoffService: Service {
    public let configuration: DaemonConfiguration
    /// Where the configuration came from, to read it again on SIGHUP (nil: defaults only).
    public let configurationPath: String?
    /// Settings forced on the command line, applied again after every reload.
    public let overrides: @Sendable (inout DaemonConfiguration) -> Void
    public let logger: Logger

    public init(
        configuration: DaemonConfiguration, configurationPath: String?,
        overrides: @escaping @Sendable (inout DaemonConfiguration) -> Void = { _ in }, logger: Logger
    ) {
        self.configuration = configuration
        self.configurationPath = configurationPath
        self.overrides = overrides
        self.logger = logger
    }

    public func run() async throws {
        let notifier = SystemdNotifier()
        let bus: DBusConnection
        do {
            bus = try await DBusConnection.connect(to: configuration.bus)
        } catch {
            throw HandoffServiceError("cannot connect to the D-Bus \(configuration.bus): \(error)")
        }
        defer { Task { await bus.close() } }
        let manager = try await BlueZObjectManager.start(on: bus)
        if !manager.isServicePresent {
            logger.warning("bluetoothd (org.bluez) is not running; waiting for it")
        }
        var radioLogger = Logger(label: "handoffd.radio")
        radioLogger.logLevel = logger.logLevel
        // Broadcast until the privacy check has asked the kernel: a connectable
        // advertisement must never go out from the public address.
        let radio = LERadio(
            connection: bus, manager: manager, configuration: Self.radioConfiguration(configuration),
            logger: radioLogger)
        let privacy = AddressPrivacyMonitor(
            manager: manager, radio: radio, selector: configuration.adapter,
            configured: configuration.advertisementType, mode: configuration.addressPrivacy,
            mainConfPath: configuration.bluetoothdMainConf,
            logger: logger)
        let (book, problems) = AccountBook.load(directory: configuration.accountsDirectory)
        for problem in problems { logger.error("account not loaded: \(problem)") }
        logger.info("\(book.keys.count) account(s) loaded from \(configuration.accountsDirectory)")
        let daemon = HandoffDaemon(
            settings: Self.settings(configuration), radio: radio, accounts: book, privacy: privacy, logger: logger)
        var socketOptions = SocketServer.Options(path: configuration.socketPath)
        socketOptions.mode = mode_t(configuration.socketMode)
        socketOptions.group = configuration.socketGroup
        socketOptions.maximumLineLength = configuration.maxLineBytes
        let server = SocketServer(options: socketOptions, daemon: daemon, logger: logger)

        try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await radio.run() }
            group.addTask { await privacy.run() }
            group.addTask { await daemon.run() }
            let socketPath = configuration.socketPath
            group.addTask {
                try await server.run {
                    // READY=1 only once clients can connect: Type=notify units order on it.
                    try? notifier.ready(status: "serving \(socketPath)")
                    logger.notice("handoffd \(HandoffDaemon.version) ready")
                }
            }
            group.addTask { await reloadOnHangup(daemon: daemon, notifier: notifier) }
            if let interval = notifier.watchdogInterval {
                group.addTask {
                    await notifier.runWatchdog {
                        await Self.isHealthy(daemon: daemon, bus: bus, within: interval / 4)
                    }
                }
            }
            // Runs until a part fails (the socket cannot be bound, …) or a graceful shutdown begins.
            group.addTask { try? await gracefulShutdown() }
            var failure: (any Error)?
            do { try await group.next() } catch { failure = error }
            logger.notice(failure == nil ? "shutting down" : "shutting down after a failure")
            try? notifier.stopping()
            await daemon.shutDown()
            manager.stop()
            group.cancelAll()
            if let failure, !(failure is CancellationError) { throw failure }
        }
        logger.notice("handoffd stopped")
    }

    private func reloadOnHangup(daemon: HandoffDaemon, notifier: SystemdNotifier) async {
        for await _ in await UnixSignalsSequence(trapping: .sighup) {
            try? notifier.reloading(status: "reloading")
            do {
                var fresh = try DaemonConfiguration.load(from: configurationPath)
                overrides(&fresh)
                if fresh != configuration {
                    logger.notice(
                        "configuration changes other than accounts take effect at the next restart (systemctl restart handoffd)")
                }
                let (book, problems) = AccountBook.load(directory: fresh.accountsDirectory)
                for problem in problems { logger.error("account not loaded: \(problem)") }
                await daemon.reload(accounts: book)
                logger.notice("reloaded: \(book.keys.count) account(s)")
            } catch {
                logger.error("reload failed, keeping the old configuration: \(error)")
            }
            try? notifier.ready(status: "serving \(configuration.socketPath)")
        }
    }

    /// The watchdog's health check: the daemon actor answers (its queue is not stuck behind a hung
    /// call), and the D-Bus connection's event loop still gets replies from the bus. A failed check
    /// skips one ping; systemd restarts handoffd only after a whole interval without one.
    static func isHealthy(daemon: HandoffDaemon, bus: DBusConnection, within limit: Duration) async -> Bool {
        guard await daemon.isResponsive() else { return false }
        let ping = DBusMessage.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
            interface: "org.freedesktop.DBus.Peer", member: "Ping")
        do {
            _ = try await bus.call(ping, timeout: limit)
            return true
        } catch {
            return false
        }
    }

    static func radioConfiguration(_ configuration: DaemonConfiguration) -> LERadio.Configuration {
        var radio = LERadio.Configuration()
        radio.adapter = configuration.adapter
        radio.powerOnAdapter = configuration.powerOnAdapter
        radio.companyID = configuration.companyID
        radio.minInterval = configuration.advertisingIntervalMilliseconds.lowerBound
        radio.maxInterval = configuration.advertisingIntervalMilliseconds.upperBound
        radio.advertisementType = .broadcast  // until AddressPrivacyMonitor decides
        return radio
    }

    static func settings(_ configuration: DaemonConfiguration) -> DaemonSettings {
        var settings = DaemonSettings()
        settings.epochSeconds = configuration.epochSeconds
        settings.companyID = configuration.companyID
        settings.expiry = configuration.nearbyExpiry
        settings.registryCap = configuration.nearbyRegistryCap
        settings.maxClients = configuration.maxClients
        settings.maxActivitiesPerClient = configuration.maxActivitiesPerClient
        return settings
    }
}

/// A start-up failure with a message that says what to do.
public struct HandoffServiceError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
