#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import BlueZ
import DequeModule
import HandoffCore
import HandoffStore

/// This device's identity and, per account, the other devices it knows
/// (docs/devices.md): which device sent a beacon, the introductions to make,
/// and keeping the rosters on disk.
struct DeviceDirectory: Sendable {
    /// After a failed introduction, none is tried for the account for this long, doubled after
    /// each further failure up to `maximumRetryDelay` (a device that advertises non-connectably,
    /// out of range, or from before introductions: each attempt pauses our discovery).
    static let retryDelay: Duration = .seconds(30)
    static let maximumRetryDelay: Duration = .seconds(1800)
    /// Rosters whose only change is a device heard again are saved at most this often.
    static let saveInterval: Duration = .seconds(600)

    let identity: DeviceIdentity
    let store: DeviceStore?
    private var rosters: [AccountID: (name: String, roster: DeviceRoster)] = [:]
    /// Accounts whose roster changed since it was last saved.
    private var unsaved: Set<AccountID> = []
    private var lastSave = ContinuousClock.now
    /// Accounts whose last introduction failed: when the next may start, and the delay after that.
    private var backoff: [AccountID: (next: ContinuousClock.Instant, delay: Duration)] = [:]
    /// The introduction under way, if any: one at a time.
    private(set) var introduction: (origin: BeaconOrigin, task: Task<Void, Never>)?

    /// A directory with `identity`, storing rosters in `store` (nil: in memory only).
    init(identity: DeviceIdentity, store: DeviceStore?) {
        self.identity = identity
        self.store = store
    }

    /// Follows the account list: loads the rosters of new accounts and drops those of
    /// accounts that went. Returns the problems met (a roster that cannot be read is
    /// started empty, and the file is left alone until the roster changes).
    mutating func use(accounts: [AccountKey]) -> [String] {
        var problems: [String] = []
        let ids = Set(accounts.map(\.id))
        for id in rosters.keys where !ids.contains(id) { rosters[id] = nil }
        for account in accounts where rosters[account.id]?.name != account.name {
            var roster = DeviceRoster()
            if let store {
                do { roster = try store.roster(account: account.name) } catch { problems.append("\(error)") }
            }
            rosters[account.id] = (account.name, roster)
        }
        return problems
    }

    /// The roster device that sent beacons from `origin`, if it is known.
    func device(sending origin: BeaconOrigin, key: AccountKey) -> DeviceRoster.Device? {
        rosters[key.id]?.roster.device(sending: origin.device, schedule: key.schedule, epoch: origin.epoch)
    }

    /// The roster device that sent beacons from `origin`, recognised under `key`, looked up in the
    /// roster of `account` (a retired key's beacons: the roster is now the new key's).
    func device(sending origin: BeaconOrigin, key: AccountKey, roster account: AccountID) -> DeviceRoster.Device? {
        rosters[account]?.roster.device(sending: origin.device, schedule: key.schedule, epoch: origin.epoch)
    }

    /// The account's key was replaced (a rekey): its roster is now the new identifier's.
    mutating func rekeyed(from old: AccountID, to new: AccountID) {
        guard let entry = rosters.removeValue(forKey: old) else { return }
        rosters[new] = entry
        if unsaved.remove(old) != nil { unsaved.insert(new) }
    }

    /// The roster of `account`.
    func roster(of account: AccountID) -> DeviceRoster { rosters[account]?.roster ?? DeviceRoster() }

    /// Drops the devices with these fingerprints from the roster of `account` and saves it now;
    /// returns the problem, if any.
    mutating func drop(_ fingerprints: [String], account: AccountID) -> String? {
        guard var entry = rosters[account] else { return nil }
        for device in entry.roster.devices where fingerprints.contains(device.card.fingerprint) {
            _ = entry.roster.remove(device.card.publicKey)
        }
        rosters[account] = entry
        unsaved.remove(account)
        do { try store?.save(entry.roster, account: entry.name) } catch { return "\(error)" }
        return nil
    }

    /// The known devices of `account`.
    func devices(of account: AccountID) -> [DeviceRoster.Device] { rosters[account]?.roster.devices ?? [] }

    /// Notes that a roster device was heard.
    mutating func heard(_ device: DeviceRoster.Device, account: AccountID, now: Double) {
        rosters[account]?.roster.heard(device.card.publicKey, now: now)
        unsaved.insert(account)
    }

    /// Records a card learned in an introduction; returns whether the roster changed.
    /// Our own card (our key, heard back) is never recorded.
    mutating func learn(_ card: DeviceCard, account: AccountID, now: Double) -> Bool {
        guard card.publicKey != identity.card.publicKey, rosters[account] != nil else { return false }
        let changed = rosters[account]!.roster.learn(card, now: now)
        unsaved.insert(account)
        if changed { lastSave = .now - Self.saveInterval }
        return changed
    }

    /// Saves the rosters that changed, when a card was learned or `saveInterval` has
    /// passed (`force`: now). Returns the problems met.
    mutating func save(force: Bool = false) -> [String] {
        guard let store, !unsaved.isEmpty, force || ContinuousClock.now - lastSave >= Self.saveInterval else { return [] }
        var problems: [String] = []
        for account in unsaved {
            guard let (name, roster) = rosters[account] else { continue }
            do { try store.save(roster, account: name) } catch { problems.append("\(error)") }
        }
        unsaved.removeAll()
        lastSave = .now
        return problems
    }

    /// Removes the stored roster of a removed account; returns the problem, if any.
    mutating func forgetRoster(account name: String) -> String? {
        for (id, entry) in rosters where entry.name == name {
            rosters[id] = nil
            unsaved.remove(id)
        }
        do { try store?.removeRoster(account: name) } catch { return "\(error)" }
        return nil
    }

    // MARK: Introductions

    /// Entries whose delayed introduction is pending, in the order they fall due (all wait the same
    /// delay), and the same as a set.
    private var scheduled: Deque<(id: String, due: ContinuousClock.Instant)> = []
    private var scheduledIDs: Set<String> = []
    /// Wakes the daemon when the first pending introduction falls due: one timer however many wait
    /// (a room full of our devices appears at once), not a task each.
    var introductionTimer = OneShotTimer()

    /// Notes a delayed introduction for the nearby entry `id`, due at `due` (no earlier than any
    /// pending); false when one is pending already.
    mutating func scheduleIntroduction(_ id: String, due: ContinuousClock.Instant) -> Bool {
        guard scheduledIDs.insert(id).inserted else { return false }
        scheduled.append((id, due))
        return true
    }

    /// Takes the pending introductions due by `now`, in order.
    mutating func dueIntroductions(now: ContinuousClock.Instant) -> [String] {
        var due: [String] = []
        while let first = scheduled.first, first.due <= now {
            scheduled.removeFirst()
            scheduledIDs.remove(first.id)
            due.append(first.id)
        }
        return due
    }

    /// When the first pending introduction falls due.
    var nextIntroduction: ContinuousClock.Instant? { scheduled.first?.due }

    /// No introduction starts within this long of the end of another exchange over GATT (a
    /// continuation or an introduction): on the VM rig, connecting again to an origin that had just
    /// been connected to (under a new private address) left its services unresolved, and bluetoothd
    /// 5.66 exited when that link was dropped.
    static let quietAfterExchange: Duration = .seconds(30)
    /// `quietAfterExchange` as the settings say.
    var quiet: Duration = Self.quietAfterExchange
    private var lastExchange: ContinuousClock.Instant?

    /// Notes that an exchange over GATT ended (a continuation; introductions note themselves).
    mutating func exchangeEnded(now: ContinuousClock.Instant) { lastExchange = now }

    /// Whether an introduction to `origin` may start now.
    func mayIntroduce(_ origin: BeaconOrigin, now: ContinuousClock.Instant) -> Bool {
        guard introduction == nil else { return false }
        if let lastExchange, now - lastExchange < quiet { return false }
        return backoff[origin.account].map { now >= $0.next } ?? true
    }

    mutating func begin(_ origin: BeaconOrigin, task: Task<Void, Never>) {
        introduction = (origin, task)
    }

    /// Ends the introduction to `origin`. After a failure the account waits (`retryDelay`,
    /// doubling); a success ends the wait. A cancelled one (a continuation took the link)
    /// changes nothing.
    mutating func end(_ origin: BeaconOrigin, succeeded: Bool?, now: ContinuousClock.Instant) {
        if introduction?.origin == origin { introduction = nil }
        lastExchange = now
        switch succeeded {
        case true?: backoff[origin.account] = nil
        case false?:
            let delay = backoff[origin.account].map { min($0.delay * 2, Self.maximumRetryDelay) } ?? Self.retryDelay
            backoff[origin.account] = (now + delay, delay)
        case nil: break
        }
    }

    /// Cancels the introduction under way (a continuation needs the link).
    mutating func cancelIntroduction() {
        introduction?.task.cancel()
        introductionTimer.cancel()
    }
}

extension DeviceDirectory {
    /// The default device name: the pretty hostname from /etc/machine-info (what
    /// `hostnamectl set-hostname --pretty` sets), else the hostname, else "Linux".
    static func defaultName(machineInfo: String = "/etc/machine-info") -> String {
        if let text = try? String(contentsOfFile: machineInfo, encoding: .utf8) {
            for line in text.split(whereSeparator: \.isNewline) where line.hasPrefix("PRETTY_HOSTNAME=") {
                let name = unquote(line.dropFirst("PRETTY_HOSTNAME=".count))
                if (try? DeviceCard.validate(name: name)) != nil { return name }
            }
        }
        let host = ProcessInfo.processInfo.hostName
        if (try? DeviceCard.validate(name: host)) != nil { return host }
        return "Linux"
    }

    /// An environment-file value: single or double quotes removed, backslash escapes undone.
    private static func unquote(_ value: Substring) -> String {
        var text = value.trimmingWhitespaceCharacters()
        if text.count >= 2, let first = text.first, first == "\"" || first == "'", text.last == first {
            text = String(text.dropFirst().dropLast())
        }
        var result = ""
        var escaped = false
        for character in text {
            if escaped {
                result.append(character)
                escaped = false
            } else if character == "\\" {
                escaped = true
            } else {
                result.append(character)
            }
        }
        return result
    }
}
