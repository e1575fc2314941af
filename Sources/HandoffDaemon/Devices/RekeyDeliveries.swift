#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
import HandoffCore
import HandoffStore

/// On a device that removed another from an account (docs/devices.md, section 7): per account,
/// the retired key and the envelopes still waiting for their devices, as kept in the store
/// (`<account>.handoff-rekey`), with the newest beacon each waiting device was heard with.
struct RekeyDeliveries: Sendable {
    struct Account: Sendable {
        var stored: PendingRekey
        /// The envelopes by recipient fingerprint.
        var envelopes: [String: RekeyEnvelope]
        /// Devices that answered `unknownDevice`: they are introduced to first.
        var introduce: Set<String> = []
        /// The newest beacon heard from each waiting device under the retired key, and the
        /// bluetoothd device that carried it.
        var heard: [String: (beacon: RecognizedBeacon, device: String?)] = [:]
    }

    private(set) var accounts: [String: Account] = [:]

    /// The retired keys to recognise.
    var retiredKeys: [AccountKey] { accounts.values.map(\.stored.retired) }

    func pending(account name: String) -> Account? { accounts[name] }

    /// The account whose retired key has the identifier `id`.
    func account(retired id: AccountID) -> (name: String, Account)? {
        accounts.first { $0.value.stored.retired.id == id }.map { ($0.key, $0.value) }
    }

    /// Whether a new key waits for the device `fingerprint` of the account `name`.
    func isPending(_ fingerprint: String, account name: String) -> Bool {
        accounts[name]?.envelopes[fingerprint] != nil
    }

    mutating func set(_ account: Account?, name: String) { accounts[name] = account }

    mutating func noteHeard(_ fingerprint: String, account name: String, beacon: RecognizedBeacon, device: String?) {
        accounts[name]?.heard[fingerprint] = (beacon, device)
    }

    mutating func needsIntroduction(_ fingerprint: String, account name: String, _ needed: Bool) {
        if needed { accounts[name]?.introduce.insert(fingerprint) } else { accounts[name]?.introduce.remove(fingerprint) }
    }

    /// Drops the envelope of `fingerprint`; returns the account as it now is (nil when it had
    /// nothing pending for that device).
    mutating func delivered(_ fingerprint: String, account name: String) -> Account? {
        guard var account = accounts[name], account.envelopes.removeValue(forKey: fingerprint) != nil else { return nil }
        account.stored.deliveries.removeAll { $0.device == fingerprint }
        account.heard[fingerprint] = nil
        account.introduce.remove(fingerprint)
        accounts[name] = account
        return account
    }

    /// Loads the pending rekeys of `keys` from `store`: one whose retired key is still the current
    /// key (the key file was not replaced), or that expired, or that has nothing pending, is
    /// removed. Returns the problems met.
    mutating func load(keys: [AccountKey], store: DeviceStore?, identity: DeviceIdentity, rosters: (AccountKey) -> DeviceRoster, now: Double)
        -> [String]
    {
        guard let store else { return [] }
        var problems: [String] = []
        let names = Set(keys.map(\.name))
        for name in accounts.keys where !names.contains(name) { accounts[name] = nil }
        for key in keys where accounts[key.name] == nil {
            let stored: PendingRekey?
            do { stored = try store.pendingRekey(account: key.name) } catch {
                problems.append("\(error)")
                continue
            }
            guard let stored else { continue }
            guard stored.retired.id != key.id, stored.newAccount == key.id, now < stored.expires, !stored.deliveries.isEmpty else {
                do { try store.removePendingRekey(account: key.name) } catch { problems.append("\(error)") }
                continue
            }
            let roster = rosters(key)
            var envelopes: [String: RekeyEnvelope] = [:]
            for delivery in stored.deliveries {
                guard let card = roster.devices.first(where: { $0.card.fingerprint == delivery.device })?.card else { continue }
                do {
                    envelopes[delivery.device] = try RekeyEnvelope.restore(
                        bytes: delivery.envelope, newAccount: stored.newAccount, removed: stored.removed, from: identity,
                        to: card, oldAccount: stored.retired.id)
                } catch {
                    problems.append("the pending new key of account \(key.name) for device \(delivery.device): \(error)")
                }
            }
            accounts[key.name] = Account(stored: stored, envelopes: envelopes)
        }
        return problems
    }

    /// Forgets the accounts whose envelopes expired; returns their names.
    mutating func expire(now: Double) -> [String] {
        let gone = accounts.filter { now >= $0.value.stored.expires }.map(\.key)
        for name in gone { accounts[name] = nil }
        return gone
    }
}
