import DBus
import DesktopEntries
import Foundation
import HandoffKit
import Logging

/// The desktop agent: one per logged-in user. It follows the nearby activities of the
/// user's accounts through HandoffKit, shows one notification per activity through
/// `org.freedesktop.Notifications`, and when the user picks Continue, continues the
/// activity and hands it to the app whose desktop entry declares its type.
///
/// Everything that changes its state goes through one queue (`Input`), handled one at a
/// time, so that a notification call in flight never races the next event.
public actor Agent {
    /// How the agent connects and where it looks.
    public struct Configuration: Sendable {
        /// handoffd's socket; nil: `HANDOFF_SOCKET`, else the default path (HandoffKit's rule).
        public var socketPath: String?
        /// The session bus; `.session` reads `DBUS_SESSION_BUS_ADDRESS`.
        public var bus: DBusBusAddress
        /// The environment: XDG directories, `PATH`, `BROWSER`, and what launched apps inherit.
        public var environment: [String: String]
        /// How long to wait before connecting again to a bus or daemon that went away.
        public var retryDelay: Duration
        /// Watch the applications directories with inotify (else read them only at start).
        public var watchApplications: Bool

        public init(
            socketPath: String? = nil, bus: DBusBusAddress = .session,
            environment: [String: String] = ProcessInfo.processInfo.environment, retryDelay: Duration = .seconds(1),
            watchApplications: Bool = true
        ) {
            self.socketPath = socketPath
            self.bus = bus
            self.environment = environment
            self.retryDelay = retryDelay
            self.watchApplications = watchApplications
        }
    }

    enum Input: Sendable {
        case nearby(NearbyChange)
        case listed(Set<String>)
        case busUp(NotificationServer, Set<String>)
        case busDown
        case signal(NotificationSignal)
        case applicationsChanged
        case continued(nearbyID: String, Result<ContinuedActivity, ContinueAttemptError>, continuation: String?)
        case pairing(PairingChange)
    }

    /// A pairing attempt of this user waiting for its answer (docs/desktop.md, "Pairing").
    struct PairingEntry {
        var event: PairNumberEvent
        var notification: UInt32?
        /// Closed by the user without an answer: not shown again (the terminal still asks).
        var dismissed = false
    }

    struct ContinueAttemptError: Error, Sendable { var message: String }

    /// What the agent knows about one nearby activity.
    struct Entry {
        var activity: NearbyActivity
        var notification: UInt32?
        var shown: NotificationRequest?
        /// Dismissed by the user (or closed by the server): not shown again until it changes.
        var dismissed = false
        var continuing = false
    }

    public let configuration: Configuration
    let logger: Logger
    let directories: XDGDirectories
    let launcher: Launcher
    let handOvers: HandOverFiles
    private let inputs: AsyncStream<Input>
    private let inputSink: AsyncStream<Input>.Continuation

    private(set) var index = ApplicationIndex()
    var entries: [String: Entry] = [:]
    private var byNotification: [UInt32: String] = [:]
    var server: NotificationServer?
    var capabilities: Set<String> = []
    private var clientTask: Task<Void, Never>?
    var client: HandoffClient?
    private var declaredTypes: [String]?
    var pairings: [String: PairingEntry] = [:]
    var pairingByNotification: [UInt32: String] = [:]

    public init(configuration: Configuration, logger: Logger) {
        self.configuration = configuration
        self.logger = logger
        directories = XDGDirectories(environment: configuration.environment)
        launcher = Launcher(environment: configuration.environment)
        handOvers = HandOverFiles(runtimeDir: directories.runtimeDir)
        (inputs, inputSink) = AsyncStream.makeStream(of: Input.self)
    }

    nonisolated func submit(_ input: Input) { inputSink.yield(input) }

    /// Runs until the task is cancelled.
    public func run() async {
        if directories.runtimeDir == nil {
            logger.warning("XDG_RUNTIME_DIR is not set: hand-over files go to \(handOvers.directory)")
        }
        reloadApplications()
        var watcher: DirectoryWatcher?
        if configuration.watchApplications {
            do {
                watcher = try DirectoryWatcher(directories: directories.applicationDirectories) { [weak self] in
                    self?.submit(.applicationsChanged)
                }
            } catch {
                logger.warning("cannot watch the applications directories (\(error)); they are read only at start")
            }
        }
        let bus = Task { await self.runBus() }
        startClient()
        await withTaskCancellationHandler {
            for await input in inputs { await handle(input) }
        } onCancel: {
            inputSink.finish()
        }
        watcher?.stop()
        bus.cancel()
        clientTask?.cancel()
        await client?.close()
        if let server {
            for id in byNotification.keys { try? await server.close(id) }
            for id in pairingByNotification.keys { try? await server.close(id) }
        }
    }

    // MARK: Applications

    func reloadApplications() {
        index = ApplicationIndex(directories: directories.applicationDirectories, path: configuration.environment["PATH"])
        for problem in index.problems { logger.warning("\(problem)") }
        let summary = index.types.map { "\($0) → \(index.byType[$0]!.id)" }.joined(separator: ", ")
        logger.info("activity types declared by desktop entries: \(summary.isEmpty ? "none" : summary)")
    }

    // MARK: handoffd

    /// A client declaring the index's types; a new one when they change (`hello`'s
    /// `handles` is fixed for a client).
    func startClient() {
        let types = index.types
        guard types != declaredTypes || clientTask == nil else { return }
        declaredTypes = types
        clientTask?.cancel()
        let old = client
        let newClient = HandoffClient(
            configuration: .init(
                app: "handoff-agent", handles: types, socketPath: configuration.socketPath, pairingEvents: true))
        client = newClient
        let retry = configuration.retryDelay
        let logger = self.logger
        // The old client's attempts are forgotten; the daemon tells the new one of any still waiting.
        submit(.pairing(.reconnected))
        let pairingChanges = newClient.pairingChanges()
        clientTask = Task { [weak self] in
            await old?.close()
            let pairingTask = Task { [weak self] in
                for await change in pairingChanges { self?.submit(.pairing(change)) }
            }
            defer { pairingTask.cancel() }
            // Failures in a row: the first is a warning, the rest (handoffd still down, the
            // agent trying again less and less often) only debug lines, so that a session
            // without handoffd does not fill the journal.
            var failures = 0
            while !Task.isCancelled {
                do {
                    // What is nearby now: what this agent knew and the daemon does not is lost.
                    let listed = try await newClient.list()
                    if failures > 0 { logger.notice("handoffd answers again (after \(failures) failed attempts)") }
                    failures = 0
                    self?.submit(.listed(Set(listed.map(\.id))))
                    for try await change in newClient.nearby() {
                        self?.submit(.nearby(change))
                    }
                    return
                } catch is CancellationError {
                    break
                } catch {
                    failures += 1
                    let delay = Self.retryDelay(after: failures, base: retry)
                    if failures == 1 {
                        logger.warning("handoffd: \(error); trying again, less often while it does not answer")
                    } else {
                        logger.debug("handoffd: \(error); attempt \(failures) failed, next in \(delay)")
                    }
                    try? await Task.sleep(for: delay)
                }
            }
            await newClient.close()
        }
    }

    /// The wait after `failures` failed attempts in a row to reach handoffd: `base`,
    /// doubling, at most 10 times `base` (10 s by default).
    static func retryDelay(after failures: Int, base: Duration) -> Duration {
        min(base * (1 << min(max(failures - 1, 0), 4)), base * 10)
    }

    // MARK: The session bus

    func runBus() async {
        while !Task.isCancelled {
            do {
                let connection = try await DBusConnection.connect(to: configuration.bus)
                let server = NotificationServer(connection: connection)
                let signals = try await server.signals()
                let owners = try await connection.nameOwnerChanges(of: NotificationServer.name)
                let ownerTask = Task { [weak self] in
                    var first = true
                    for try await owner in owners {
                        if first { first = false; continue }
                        guard owner != nil, let self else { continue }
                        // A new notification server: ask its capabilities, show everything again.
                        let caps = (try? await server.capabilities()) ?? []
                        self.submit(.busUp(server, caps))
                    }
                }
                let caps: Set<String>
                do {
                    caps = try await server.capabilities()
                } catch {
                    logger.warning("no notification server yet (\(error)); waiting for one")
                    caps = []
                }
                submit(.busUp(server, caps))
                do {
                    for try await signal in signals { submit(.signal(signal)) }
                } catch {}
                ownerTask.cancel()
                submit(.busDown)
                if Task.isCancelled { await connection.close(); return }
                logger.warning("the session bus went away; connecting again")
            } catch {
                logger.warning("cannot connect to the session bus: \(error)")
            }
            try? await Task.sleep(for: configuration.retryDelay)
        }
    }

    // MARK: Inputs

    func handle(_ input: Input) async {
        switch input {
        case .nearby(.appeared(let activity)), .nearby(.updated(let activity)):
            await present(activity)
        case .nearby(.lost(let activity)):
            await withdraw(activity.id)
        case .listed(let ids):
            for id in entries.keys where !ids.contains(id) { await withdraw(id) }
        case .busUp(let server, let caps):
            self.server = server
            capabilities = caps
            logger.info("notification server capabilities: \(caps.sorted().joined(separator: " "))")
            // Earlier notification ids mean nothing to this server: show everything anew.
            byNotification = [:]
            pairingByNotification = [:]
            for id in entries.keys {
                entries[id]?.notification = nil
                entries[id]?.shown = nil
                if let activity = entries[id]?.activity { await present(activity) }
            }
            for id in pairings.keys {
                pairings[id]?.notification = nil
                await presentPairing(id)
            }
        case .busDown:
            server = nil
            byNotification = [:]
            pairingByNotification = [:]
            for id in pairings.keys { pairings[id]?.notification = nil }
            for id in entries.keys {
                entries[id]?.notification = nil
                entries[id]?.shown = nil
            }
        case .signal(.actionInvoked(let id, let action)) where pairingByNotification[id] != nil:
            await pairingAction(id, action)
        case .signal(.closed(let id, _)) where pairingByNotification[id] != nil:
            if let pairing = pairingByNotification.removeValue(forKey: id) {
                pairings[pairing]?.notification = nil
                pairings[pairing]?.dismissed = true
            }
        case .pairing(let change):
            await handlePairing(change)
        case .signal(.actionInvoked(let id, let action)):
            guard let nearbyID = byNotification[id], let entry = entries[nearbyID] else { return }
            switch action {
            case "default", "continue":
                guard NotificationContent.canContinue(entry.activity, app: app(for: entry.activity)) else { return }
                startContinue(entry.activity)
            case "dismiss":
                await dismiss(nearbyID)
            default:
                logger.debug("ignored action \(action) on notification \(id)")
            }
        case .signal(.closed(let id, let reason)):
            guard let nearbyID = byNotification.removeValue(forKey: id) else { return }
            entries[nearbyID]?.notification = nil
            // Expired (1) or dismissed by the user (2): not shown again until it changes.
            if reason != 3 { entries[nearbyID]?.dismissed = true }
        case .applicationsChanged:
            reloadApplications()
            startClient()
            for (_, entry) in entries { await present(entry.activity) }
        case .continued(let nearbyID, let result, let continuation):
            entries[nearbyID]?.continuing = false
            switch result {
            case .success(let activity):
                await handOver(activity, continuation: continuation ?? "c", nearbyID: nearbyID)
            case .failure(let failure):
                logger.warning("continuing \(nearbyID) failed: \(failure.message)")
                await showFailure(failure.message, nearbyID: nearbyID)
            }
        }
    }

    func app(for activity: NearbyActivity) -> DesktopEntry? {
        activity.type.flatMap { index.byType[$0] }
    }

    /// Shows or replaces the notification for `activity`, or does nothing when what it
    /// would show is what is shown.
    func present(_ activity: NearbyActivity) async {
        var entry = entries[activity.id] ?? Entry(activity: activity)
        let changed = entry.activity.type != activity.type || entry.activity.title != activity.title
        entry.activity = activity
        if changed { entry.dismissed = false }
        entries[activity.id] = entry
        guard !entry.dismissed, !entry.continuing, let server else { return }
        let request = NotificationContent.request(for: activity, app: app(for: activity), capabilities: capabilities)
        if entry.shown == request, entry.notification != nil { return }
        do {
            let id = try await server.notify(request, replacing: entry.notification ?? 0)
            if let old = entry.notification, old != id { byNotification[old] = nil }
            byNotification[id] = activity.id
            entries[activity.id]?.notification = id
            entries[activity.id]?.shown = request
        } catch {
            logger.warning("cannot show the notification for \(activity.id): \(error)")
        }
    }

    func withdraw(_ nearbyID: String) async {
        guard let entry = entries.removeValue(forKey: nearbyID) else { return }
        guard let id = entry.notification else { return }
        byNotification[id] = nil
        do { try await server?.close(id) } catch {
            logger.debug("CloseNotification \(id): \(error)")
        }
    }

    func dismiss(_ nearbyID: String) async {
        entries[nearbyID]?.dismissed = true
        guard let id = entries[nearbyID]?.notification else { return }
        entries[nearbyID]?.notification = nil
        byNotification[id] = nil
        try? await server?.close(id)
    }

    func showFailure(_ message: String, nearbyID: String) async {
        guard let entry = entries[nearbyID], let server else { return }
        let request = NotificationContent.failure(
            message, for: entry.activity, app: app(for: entry.activity), capabilities: capabilities)
        do {
            let id = try await server.notify(request, replacing: entry.notification ?? 0)
            if let old = entry.notification, old != id { byNotification[old] = nil }
            byNotification[id] = nearbyID
            entries[nearbyID]?.notification = id
            entries[nearbyID]?.shown = request
            entries[nearbyID]?.dismissed = false
        } catch {
            logger.warning("cannot show the notification for \(nearbyID): \(error)")
        }
    }
}

/// The continuation's name, from `willContinue` (which runs on another task).
final class ContinuationName: @unchecked Sendable {
    private let lock = NSLock()
    private var name: String?
    func set(_ value: String) { lock.withLock { name = value } }
    var value: String? { lock.withLock { name } }
}
