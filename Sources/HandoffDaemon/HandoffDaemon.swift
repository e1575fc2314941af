import BlueZ
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffProtocol
import HandoffStore
import Logging

/// The coordinator of handoffd: it passes scan reports to the nearby
/// activities and their changes to the clients, turns the local activities
/// into the advertisement, and joins continuations to the link. Each part
/// keeps its own state (docs/architecture.md); the daemon only decides
/// who is told what, and when.
///
/// Timers exist only while there is something to time (an advertisement to
/// rotate, a nearby entry or an activity to expire); an idle daemon sleeps.
public actor HandoffDaemon {
    public static let version = HandoffVersion.current

    let settings: DaemonSettings
    let logger: Logger
    let radio: any Radio
    /// How continuations travel; nil when this daemon has none (it then answers `out-of-range`).
    let link: (any ContinuationLink)?
    var accounts: AccountBook
    var clients = ClientDirectory()
    var activities: LocalActivities
    var nearby: NearbyActivities
    var advertiser: Advertiser
    var origin: OriginExchanges
    var outgoing = OutgoingContinuations()
    var pairing = PairingState()
    var devices: DeviceDirectory
    /// After a device removal: the new key's envelopes still to deliver (docs/devices.md, section 7).
    var rekeys = RekeyDeliveries()
    /// Continuation streams open or offered, and their bound (docs/continuation.md, section 10).
    var streams: DaemonStreams
    /// How streams reach the system; nil: none are offered or opened.
    var streamNetwork: (any StreamNetwork)?

    public init(
        settings: DaemonSettings, radio: any Radio, link: (any ContinuationLink)?, accounts: AccountBook,
        logger: Logger
    ) {
        self.settings = settings
        self.radio = radio
        self.link = link
        self.accounts = accounts
        self.logger = logger
        let configuration = BeaconConfiguration(epochLength: settings.epochSeconds, companyID: settings.companyID)
        nearby = NearbyActivities(
            configuration: configuration, accounts: Array(accounts.keys.values), capacity: settings.registryCap,
            expiry: settings.expiry)
        activities = LocalActivities(maximumPerClient: settings.maxActivitiesPerClient)
        devices = Self.deviceDirectory(settings, logger: logger)
        devices.quiet = settings.quietAfterExchange
        advertiser = Advertiser(
            configuration: configuration, expiry: settings.expiry, cardDigest: devices.identity.card.digest)
        origin = OriginExchanges(configuration: configuration)
        streams = DaemonStreams(perUser: settings.maxStreamsPerUser, total: settings.maxStreamsTotal)
        for problem in devices.use(accounts: Array(accounts.keys.values)) { logger.error("device roster: \(problem)") }
        let problems = rekeys.load(
            keys: Array(accounts.keys.values), store: devices.store, identity: devices.identity,
            rosters: { [devices] key in devices.roster(of: key.id) }, now: Self.wallClock())
        for problem in problems { logger.error("pending new key: \(problem)") }
        if !rekeys.retiredKeys.isEmpty {
            _ = nearby.use(accounts: Array(accounts.keys.values), retired: rekeys.retiredKeys, declared: [])
        }
    }

    /// This device's identity from its file (made at the first start), named as configured.
    private static func deviceDirectory(_ settings: DaemonSettings, logger: Logger) -> DeviceDirectory {
        let name = settings.deviceName ?? DeviceDirectory.defaultName()
        let fallback = { (name: String) in
            (try? DeviceIdentity.generate(name: name)) ?? (try! DeviceIdentity.generate(name: "Linux"))
        }
        guard let directory = settings.deviceDirectory else { return DeviceDirectory(identity: fallback(name), store: nil) }
        let store = DeviceStore(path: directory)
        do {
            let (identity, created) = try store.identity(name: name)
            if created {
                logger.notice("this device is \(identity.card.name), key fingerprint \(identity.card.fingerprint) (new identity)")
            } else {
                logger.info("this device is \(identity.card.name), key fingerprint \(identity.card.fingerprint)")
            }
            return DeviceDirectory(identity: identity, store: store)
        } catch {
            logger.error("device identity not loaded: \(error); using a temporary one until handoffd restarts")
            return DeviceDirectory(identity: fallback(name), store: store)
        }
    }

    /// Where events for clients go (the gateway).
    func attach(_ events: any ClientEvents) { clients.events = events }

    /// Follows the radio's scan reports, and serves continuation requests, until cancelled.
    public func run() async {
        let serving = Task { [link] in
            await link?.serve { [weak self] request, context throws(ExchangeStatus) in
                guard let self else { throw .notCurrent }
                return try await self.serveContinuation(request, context)
            }
        }
        defer { serving.cancel() }
        var events = radio.scanEvents.makeAsyncIterator()
        while let event = await events.next(isolation: self) {
            if Task.isCancelled { break }
            guard case .report(let report) = event else { continue }
            hear(report)
        }
    }

    /// Answers as soon as the actor runs it: the watchdog's proof that the daemon's queue is not stuck.
    public func isResponsive() -> Bool { true }

    /// Takes everything off the air and tells every client goodbye.
    public func shutDown() async {
        advertiser.retire()
        nearby.timer.cancel()
        origin.endAll()
        streams.cancelAll()
        for (name, pending) in outgoing.cancelAll() {
            fail(name, pending, ContinueError(.cancelled, "handoffd is stopping"))
        }
        if let attempt = pairing.attempt { await endPairing(attempt.name, .cancelled, "cancelled: handoffd is stopping") }
        devices.cancelIntroduction()
        for problem in devices.save(force: true) { logger.error("device roster not saved: \(problem)") }
        await radio.advertise([])
    }

    /// Swaps in a reloaded account book (SIGHUP).
    public func reload(accounts newAccounts: AccountBook) async {
        accounts = newAccounts
        accountsChanged()
        await updateAdvertisement()
    }

    /// Takes the privacy check's word on what may go on the air.
    public func apply(_ policy: AdvertisingPolicy) async {
        guard policy != advertiser.policy else { return }
        _ = advertiser.apply(policy)
        // Decided anew: the beacon says whether it is connectable (`BeaconFlags.reachable`).
        await updateAdvertisement()
    }

    static func wallClock() -> Double { Date().timeIntervalSince1970 }

    // MARK: Nearby

    func hear(_ report: AdvertisementReport) {
        if report.companyID == settings.companyID, let offer = PairingAdvertisement(payload: report.data) {
            nearby.countHeard()
            hearPairing(offer, device: report.device)
            return
        }
        var retired: RecognizedBeacon?
        let events = nearby.hear(
            report, isOwn: { advertiser.isOwn($0) }, now: Self.wallClock(), instant: .now, retiredHeard: { retired = $0 })
        if let retired {
            heardRetired(retired, device: report.device.rawValue)
            return
        }
        guard !events.isEmpty else { return }
        for (name, heard) in events {
            let entry = name == .lost ? heard : identifyDevice(heard)
            if name == .appeared {
                logger.info(
                    "nearby: \(entry.activityType) from \(entry.accountName) device \(entry.deviceName ?? entry.origin.device.description)")
            }
            tell(name, entry)
        }
        // A change only sets an expiry later than any before it (now + expiry), so
        // a timer already set comes no later than needed: when it finds nothing
        // expired it sets itself again. Finding the earliest expiry visits every
        // entry, too much to do per appearance when many come at once.
        if !nearby.timer.isSet { scheduleExpiry() }
    }

    func scheduleExpiry() {
        nearby.timer.set(at: nearby.registry.nextExpiry) { [weak self] in await self?.expireNearby() }
    }

    func expireNearby() {
        for entry in nearby.expire(now: .now) {
            logger.info("lost: \(entry.activityType) from \(entry.accountName) device \(entry.origin.device)")
            tell(.lost, entry)
        }
        scheduleExpiry()
    }

    /// Tells the clients whose user may see the entry's account.
    func tell(_ name: EventName, _ entry: NearbyEntry) {
        let audience = clients.clients.values.filter { accounts.mayUse(entry.accountName, uid: $0.caller.uid) }
        // Nobody to tell: no event is built (in a room full of our devices, most appear with no client connected).
        guard !audience.isEmpty else { return }
        clients.events?.nearby(name, entry.wire, audience: audience.map(\.caller.client))
    }

    // MARK: Advertising

    /// Puts each user's current activity's beacon on the air under that user's
    /// account (or takes them off), and sets the timer for the next rotation,
    /// renewal or expiration.
    func updateAdvertisement() async {
        let instant = ContinuousClock.now
        let now = Self.wallClock()
        let wanted = activities.currentByUser(at: instant).compactMap { current in
            accounts.advertisingAccount(for: current.uid).map {
                WantedBeacon(account: $0, activity: current.id, type: current.type, flags: current.flags)
            }
        }
        let decision = advertiser.decide(wanted, now: now, instant: instant)
        for fresh in decision.fresh {
            // Known to the origin side before it is on the air: a request may follow at once.
            origin.didAdvertise(fresh.payload, account: fresh.account, activity: fresh.activity, now: now)
        }
        for note in decision.notes { logger.info("\(note)") }
        let expiration = activities.nextExpiration(after: instant)
        let next = [decision.next, expiration].compactMap { $0 }.min()
        advertiser.timer.set(at: next) { [weak self] in await self?.updateAdvertisement() }
        // While an offer is open, its pairing advertisement goes on the air instead of the beacons (docs/pairing.md).
        await radio.advertise(pairing.onAir.map { [$0] } ?? decision.onAir)
    }

    // MARK: Accounts

    func accountsChanged() {
        for problem in devices.use(accounts: Array(accounts.keys.values)) { logger.error("device roster: \(problem)") }
        loadRekeys()
        for entry in nearby.use(accounts: Array(accounts.keys.values), retired: rekeys.retiredKeys, declared: clients.declared) {
            tell(.lost, entry)
        }
    }

    /// The key of a known account.
    func key(_ account: AccountID) -> AccountKey? {
        accounts.keys.values.first { $0.id == account }
    }
}
