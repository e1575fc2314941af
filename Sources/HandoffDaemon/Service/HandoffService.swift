import BlueZ
import DBus
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#endif
import HandoffCore
import HandoffProtocol
import Logging
import ServiceLifecycle
import UnixSignals

/// handoffd's parts as one swift-service-lifecycle `ServiceGroup`: it connects
/// to the bus, builds the radio, the privacy check, the daemon, its client
/// gateway and socket, the GATT link, and systemd glue, and lists them so that
/// graceful shutdown (SIGTERM, SIGINT) takes them down in order:
/// systemd hears STOPPING=1, the watchdog and reloader stop, the daemon fails
/// unfinished continuations, takes its beacon off the air and says goodbye to
/// clients, the socket closes and its file goes, discovery stops and the
/// advertisement is unregistered, and the bus connection closes.
public struct HandoffService: Sendable {
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

    /// How long the bus connection's thread gathers messages that stream in
    /// (`DBusConnection.batchInput(within:)`): beside the scanner's 50 ms
    /// coalescing, nothing the daemon does notices 4 ms.
    static let inputBatching: Duration = .milliseconds(4)

    /// Connects to the bus and builds the group; `run()` on it runs handoffd until SIGTERM or SIGINT.
    /// - Throws: `HandoffServiceError` when the bus cannot be reached.
    public func makeGroup() async throws -> ServiceGroup {
        let logger = self.logger
        let notifier = SystemdNotifier()
        let bus: DBusConnection
        do {
            bus = try await DBusConnection.connect(to: configuration.bus)
        } catch {
            throw HandoffServiceError("cannot connect to the D-Bus \(configuration.bus): \(error)")
        }
        // In a busy room bluetoothd sends an advertisement signal every fraction of a
        // millisecond: read them a few milliseconds' worth at a time (docs/architecture.md).
        bus.batchInput(within: Self.inputBatching)
        let manager = try await BlueZObjectManager.start(
            on: bus, keepingInFull: BeaconCarriers.predicate(companyID: configuration.companyID))
        if !manager.isServicePresent {
            logger.warning("bluetoothd (org.bluez) is not running; waiting for it")
        }
        var radioLogger = Logger(label: "handoffd.radio")
        radioLogger.logLevel = logger.logLevel
        let radio = LERadio(
            connection: bus, manager: manager, configuration: Self.radioConfiguration(configuration),
            logger: radioLogger)
        let (book, problems) = AccountBook.load(directory: configuration.accountsDirectory)
        for problem in problems { logger.error("account not loaded: \(problem)") }
        logger.info("\(book.keys.count) account(s) loaded from \(configuration.accountsDirectory)")
        let link = radio.bluez.map { GattContinuationLink(bluez: $0, radio: radio, logger: logger) }
        let daemon = HandoffDaemon(
            settings: Self.settings(configuration), radio: radio, link: link, accounts: book, logger: logger)
        if let bluez = radio.bluez {
            await daemon.use(streamNetwork: BlueZStreamNetwork(bluez: bluez, settings: Self.settings(configuration)))
        }
        // Broadcast until the privacy check has asked the kernel: a connectable
        // advertisement must never go out from the public address.
        let privacy = AddressPrivacyMonitor(
            manager: manager, selector: configuration.adapter, configured: configuration.advertisementType,
            mode: configuration.addressPrivacy, mainConfPath: configuration.bluetoothdMainConf, logger: logger
        ) { policy in await daemon.apply(policy) }
        var gatewayOptions = ClientGateway.Options()
        gatewayOptions.maximumClients = configuration.maxClients
        gatewayOptions.daemonName = Self.settings(configuration).daemonName
        let gateway = await ClientGateway(daemon: daemon, options: gatewayOptions, logger: logger)
        var socketOptions = SocketServer.Options(path: configuration.socketPath)
        socketOptions.mode = mode_t(configuration.socketMode)
        socketOptions.group = configuration.socketGroup
        socketOptions.maximumLineLength = configuration.maxLineBytes
        let server = SocketServer(options: socketOptions, gateway: gateway, logger: logger)
        let socketPath = configuration.socketPath

        var parts: [PartService] = [
            .waiting("bus") {
                manager.stop()
                await bus.close()
            },
            PartService("radio", body: { await radio.run() }, stop: { await radio.shutDown() }),
            PartService("privacy check", body: { await privacy.run() }),
            PartService("socket") {
                try await server.run {
                    // READY=1 only once clients can connect: Type=notify units order on it.
                    try? notifier.ready(status: "serving \(socketPath)")
                    logger.notice("handoffd \(HandoffDaemon.version) ready")
                }
            },
            PartService("daemon", body: { await daemon.run() }, stop: {
                await daemon.shutDown()
                gateway.closeAll()
            }),
            PartService("reload on SIGHUP", body: { await reloadOnHangup(daemon: daemon, notifier: notifier) }),
            PartService("start-up pages", body: { [logger] in
                try await Task.sleep(for: StartupPages.delay)
                Self.releaseStartupPages(logger: logger)
                try await PartService.idle()
            }),
        ]
        if let interval = notifier.watchdogInterval {
            parts.append(
                PartService("watchdog") {
                    await notifier.runWatchdog {
                        await Self.isHealthy(daemon: daemon, bus: bus, within: interval / 4)
                    }
                })
        }
        parts.append(
            .waiting("systemd notification") {
                logger.notice("shutting down")
                try? notifier.stopping()
            })
        return ServiceGroup(
            configuration: ServiceGroupConfiguration(
                services: parts.map {
                    .init(
                        service: $0, successTerminationBehavior: .gracefullyShutdownGroup,
                        failureTerminationBehavior: .gracefullyShutdownGroup)
                },
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
    }

    /// Hands the executable's start-up pages back to the kernel (`StartupPages`) and logs what it did.
    static func releaseStartupPages(logger: Logger) {
        switch StartupPages.release() {
        case .success(let released):
            let mib = { (kib: Int) in String(Double(kib * 10 / 1024) / 10) }
            logger.info(
                "start-up pages handed back to the kernel: \(released.advisedBytes >> 20) MiB of the executable advised, resident file pages (RssFile) \(mib(released.residentBefore)) -> \(mib(released.residentAfter)) MiB")
        case .failure(let error):
            logger.info("start-up pages kept: \(error)")
        }
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
        if configuration.scanMonitor { radio.monitorPatterns = monitorPatterns(companyID: configuration.companyID) }
        radio.companyID = configuration.companyID
        radio.minInterval = configuration.advertisingIntervalMilliseconds.lowerBound
        radio.maxInterval = configuration.advertisingIntervalMilliseconds.upperBound
        return radio
    }

    /// Our advertisements' first bytes after the company ID: a beacon's header
    /// (high nibble the format version, low nibble random: 16 patterns, as a
    /// pattern compares whole bytes) and a pairing offer's (docs/pairing.md).
    static func monitorPatterns(companyID: UInt16) -> [AdvertisementPattern] {
        AdvertisementPattern.manufacturer(companyID, highNibble: BeaconFormat.version)
            + [AdvertisementPattern.manufacturer(companyID, firstByte: PairingFormat.advertisementHeader)]
    }

    static func settings(_ configuration: DaemonConfiguration) -> DaemonSettings {
        var settings = DaemonSettings()
        settings.epochSeconds = configuration.epochSeconds
        settings.companyID = configuration.companyID
        settings.expiry = configuration.nearbyExpiry
        settings.registryCap = configuration.nearbyRegistryCap
        settings.maxActivitiesPerClient = configuration.maxActivitiesPerClient
        settings.deviceName = configuration.deviceName
        settings.introductions = configuration.introduce
        settings.deviceDirectory = configuration.accountsDirectory
        settings.maxStreamsPerUser = configuration.maxStreamsPerUser
        settings.maxStreamsTotal = configuration.maxStreamsTotal
        settings.streamsLocalDirectory = configuration.streamsLocalDirectory
        settings.streamSocketDirectory = SocketPath.directory(of: configuration.socketPath)
        settings.bluetoothdMainConf = configuration.bluetoothdMainConf
        return settings
    }
}

/// A start-up failure with a message that says what to do.
public struct HandoffServiceError: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}
