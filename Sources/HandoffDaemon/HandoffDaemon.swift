import BlueZ
import DBus
import Foundation
import HandoffCore
import HandoffProtocol
import Logging

/// The heart of handoffd: it joins the radio, the beacon format and the
/// clients.
///
/// - It advertises a beacon for the current activity (the one most recently
///   made current on this machine), rotates it at each epoch boundary, and
///   renews it within the epoch every third of the nearby expiry: bluetoothd
///   reports an unchanged advertisement to scanners only now and then (on
///   the VM rig, once in 40 s), so receivers learn that the activity is still
///   there from fresh beacons.
/// - It recognises our accounts' beacons among the scan reports and keeps the
///   registry of nearby activities, with expiry and a size cap.
/// - It answers client requests and sends events to subscribers.
///
/// Timers exist only while there is something to time (an advertisement to
/// rotate, a nearby entry or an activity to expire); an idle daemon sleeps.
public actor HandoffDaemon {
    public static let version = HandoffVersion.current

    let settings: DaemonSettings
    let radio: LERadio
    /// Whether continuation is possible here (LE privacy); nil when nothing checks it.
    let privacy: AddressPrivacyMonitor?
    let logger: Logger
    var accounts: AccountBook
    var encoder: BeaconEncoder
    var recognizer: BeaconRecognizer
    var nearby: NearbyRegistry
    var activities: LocalActivities
    var clients: [UInt64: ClientSession] = [:]
    var nextClient: UInt64 = 0
    /// What is on the air now: account, type, flags and epoch of the beacon.
    var advertised: (account: AccountID, type: ActivityType, flags: BeaconFlags, epoch: UInt64)?
    /// When the beacon on the air is due to be renewed with a fresh one.
    var renewal: ContinuousClock.Instant?
    var rotationTimer: Task<Void, Never>?
    var expiryTimer: Task<Void, Never>?
    var expirationTimer: Task<Void, Never>?
    /// Activity types local apps declared (NSUserActivityTypes). Like an app's
    /// Info.plist, a declaration outlives the connection that made it.
    var declared: Set<ActivityType> = []
    static let maximumDeclaredTypes = 4096
    var recognized: UInt64 = 0
    var rejected: UInt64 = 0

    // Continuation (docs/continuation.md), origin side.
    /// Which activity each of our recent beacons announced; checks requests.
    var continuationServer: ContinuationServer
    /// The exchanges being served, each with its timeout.
    var exchanges: [UInt64: Task<Void, Never>] = [:]
    var nextExchange: UInt64 = 0
    var gattServer: ContinuationGattServer?
    /// The radio's bus connection and BlueZ mirror, once `run` has started.
    var bluez: (connection: DBusConnection, manager: BlueZObjectManager)?
    // Continuing side.
    /// The continuations clients asked for that have not finished, by name.
    var continuations: [String: OutgoingContinuation] = [:]
    var nextContinuation: UInt64 = 0
    /// Links being taken down after a continuation, by device.
    var disconnecting: [DBusObjectPath: Task<Void, Never>] = [:]
    /// The latest beacon heard for each nearby entry, with its recognition tag.
    var heardBeacons: [String: (beacon: RecognizedBeacon, tag: [UInt8])] = [:]
    /// Our per-epoch identifier for an account when we advertise nothing for it.
    var requesterIDs: [AccountID: (epoch: Epoch, device: DeviceID)] = [:]

    public init(
        settings: DaemonSettings, radio: LERadio, accounts: AccountBook, privacy: AddressPrivacyMonitor? = nil,
        logger: Logger
    ) {
        self.settings = settings
        self.radio = radio
        self.privacy = privacy
        self.accounts = accounts
        self.logger = logger
        let configuration = BeaconConfiguration(epochLength: settings.epochSeconds, companyID: settings.companyID)
        encoder = BeaconEncoder(configuration: configuration)
        recognizer = BeaconRecognizer(configuration: configuration, accounts: Array(accounts.keys.values))
        nearby = NearbyRegistry(capacity: settings.registryCap, expiry: settings.expiry)
        activities = LocalActivities(maximumPerClient: settings.maxActivitiesPerClient)
        continuationServer = ContinuationServer(configuration: configuration)
    }

    /// Follows the radio's scan reports until cancelled.
    public func run() async {
        let gatt = await startContinuationService()
        defer { gatt.cancel() }
        for await event in radio.scanEvents {
            if Task.isCancelled { break }
            handle(event)
        }
    }

    /// Answers as soon as the actor runs it: the watchdog's proof that the daemon's queue is not stuck.
    public func isResponsive() -> Bool { true }

    /// Takes everything off the air and tells every client goodbye.
    public func shutDown() async {
        rotationTimer?.cancel()
        expiryTimer?.cancel()
        expirationTimer?.cancel()
        cancelAllContinuations()
        await gattServer?.shutDown()
        for client in clients.values { client.outbox.close() }
        clients.removeAll()
        await radio.advertise(nil)
        await radio.shutDown()
    }

    /// Swaps in a reloaded account book (SIGHUP).
    public func reload(accounts newAccounts: AccountBook) async {
        accounts = newAccounts
        accountsChanged()
        await refreshAdvertisement()
    }

    // MARK: Clocks

    static func wallClock() -> Double { Date().timeIntervalSince1970 }

    // MARK: Scanning

    func handle(_ event: ScanEvent) {
        guard case .report(let report) = event else { return }
        let now = Self.wallClock()
        do {
            let beacon = try recognizer.recognize(report.data, now: now)
            if encoder.isOwn(beacon) { return }
            recognized += 1
            let (change, evicted) = nearby.record(
                beacon, rssi: report.rssi, device: report.device.rawValue, wallClock: Date(timeIntervalSince1970: now),
                now: .now)
            if let evicted { broadcast(.lost, evicted) }
            rememberBeacon(beacon, payload: report.data, entry: change.entry)
            switch change {
            case .appeared(let entry):
                logger.info("nearby: \(entry.activityType) from \(entry.accountName) device \(entry.origin.device)")
                broadcast(.appeared, entry)
            case .updated(let entry): broadcast(.updated, entry)
            case .refreshed: break
            }
            scheduleExpiry()
        } catch .replayed(let origin, _) {
            // bluetoothd reports an unchanged advertisement again: still nearby.
            nearby.heardAgain(
                origin, rssi: report.rssi, device: report.device.rawValue, wallClock: Date(timeIntervalSince1970: now),
                now: .now)
        } catch {
            rejected += 1
            logger.trace("ignored advertisement from \(report.address): \(error)")
        }
    }

    func scheduleExpiry() {
        expiryTimer?.cancel()
        guard let next = nearby.nextExpiry else {
            expiryTimer = nil
            return
        }
        expiryTimer = Task { [weak self] in
            try? await Task.sleep(until: next, clock: .continuous)
            guard !Task.isCancelled else { return }
            await self?.expireNearby()
        }
    }

    func expireNearby() {
        for entry in nearby.expire(now: .now) {
            logger.info("lost: \(entry.activityType) from \(entry.accountName) device \(entry.origin.device)")
            broadcast(.lost, entry)
        }
        scheduleExpiry()
    }

    // MARK: Advertising

    /// Puts the current activity's beacon on the air (or takes it off), and
    /// arranges to renew it at the next epoch boundary.
    func refreshAdvertisement() async {
        let now = Self.wallClock()
        let instant = ContinuousClock.now
        guard let current = activities.current(at: instant),
            let account = accounts.visible(to: current.uid).first
        else {
            rotationTimer?.cancel()
            rotationTimer = nil
            scheduleActivityExpiration()
            if advertised != nil {
                advertised = nil
                renewal = nil
                logger.info("nothing current: not advertising")
            }
            await radio.advertise(nil)
            return
        }
        let epoch = encoder.configuration.epoch(containing: now)
        let wanted = (account.id, current.type, current.flags, epoch.index)
        if let advertised, advertised == wanted, let renewal, instant < renewal {
            return
        }
        let payload = encoder.encode(account: account, activityType: current.type, flags: current.flags, now: now)
        continuationServer.didAdvertise(payload, account: account, activity: current.id, now: now)
        if advertised.map({ $0.account != wanted.0 || $0.type != wanted.1 || $0.flags != wanted.2 }) ?? true {
            logger.info("advertising \(current.type) for account \(account.name)")
        } else if advertised?.epoch != wanted.3 {
            logger.debug("new epoch \(epoch.index): rotated the beacon")
        } else {
            logger.trace("renewed the beacon")
        }
        advertised = wanted
        let interval = Self.renewalInterval(expiry: settings.expiry)
        renewal = instant + interval
        await radio.advertise(payload)
        scheduleRotation(at: Double(epoch.endSeconds), renewingAfter: interval)
        scheduleActivityExpiration()
    }

    /// How often the beacon is renewed within an epoch: a third of the nearby
    /// expiry (devices of one account share it), so that a receiver hears a
    /// fresh beacon at least twice before it would forget the activity; at
    /// least a second.
    static func renewalInterval(expiry: Duration) -> Duration {
        max(.seconds(1), expiry / 3)
    }

    private func scheduleRotation(at boundary: Double, renewingAfter interval: Duration) {
        rotationTimer?.cancel()
        let (seconds, attoseconds) = interval.components
        let renewalDelay = Double(seconds) + Double(attoseconds) / 1e18
        let delay = min(max(0, boundary - Self.wallClock()) + 0.01, renewalDelay)
        rotationTimer = Task { [weak self] in
            try? await Task.sleep(for: .milliseconds(Int64(delay * 1000)))
            guard !Task.isCancelled else { return }
            await self?.refreshAdvertisement()
        }
    }

    private func scheduleActivityExpiration() {
        expirationTimer?.cancel()
        guard let next = activities.nextExpiration(after: .now) else {
            expirationTimer = nil
            return
        }
        expirationTimer = Task { [weak self] in
            try? await Task.sleep(until: next, clock: .continuous)
            guard !Task.isCancelled else { return }
            await self?.refreshAdvertisement()
        }
    }

    // MARK: Accounts

    func accountsChanged() {
        let known = Array(accounts.keys.values)
        recognizer = BeaconRecognizer(configuration: recognizer.configuration, accounts: known)
        recognizer.declareActivityTypes(declared)
        for entry in nearby.retainAccounts(Set(known.map(\.id))) { broadcast(.lost, entry) }
    }

    /// Adds types an app declared; re-resolves unknown type hashes when any is new.
    func declare(_ types: Set<ActivityType>) {
        let new = types.subtracting(declared)
        guard !new.isEmpty else { return }
        declared.formUnion(new)
        recognizer.declareActivityTypes(declared)
        for entry in nearby.all {
            guard case .unknown(let hash) = entry.activityType,
                let key = accounts.keys.values.first(where: { $0.id == entry.account })
            else { continue }
            let resolved = ActivityTypeResolver(account: key, declaredTypes: declared).resolve(hash)
            if case .known = resolved, let updated = nearby.updateType(entry.id, to: resolved) {
                broadcast(.updated, updated)
            }
        }
    }

    // MARK: Events

    func broadcast(_ name: EventName, _ entry: NearbyEntry) {
        for client in clients.values where client.subscribed && accounts.mayUse(entry.accountName, uid: client.uid) {
            if let types = client.subscribedTypes, !types.contains(entry.activityType.type?.rawValue ?? "") {
                continue
            }
            guard let frame = try? WireFormat.event(name, NearbyEvent(activity: entry.wire)) else { continue }
            if !client.outbox.send(frame) {
                logger.warning("\(client.description) is not reading its events; disconnecting it")
                client.outbox.close()
            }
        }
    }
}

extension NearbyEntry {
    /// The protocol's view of the entry.
    var wire: NearbyActivity {
        NearbyActivity(
            id: id, account: accountName, device: origin.device.description, type: activityType.type?.rawValue,
            typeHash: typeHash.description, hasPayload: flags.contains(.hasPayload),
            hasWebpageURL: flags.contains(.hasWebpageURL), supportsStreams: flags.contains(.supportsStreams),
            rssi: rssi.map { ($0 * 10).rounded() / 10 }, firstSeen: firstSeen, lastSeen: lastSeen)
    }
}
