#if canImport(Glibc)
import Glibc
#endif
import Foundation
import HandoffCore
import SystemPackage
import Testing
@testable import HandoffStore

/// The device identity file and the rosters, as real files (docs/devices.md).
@Suite struct DeviceStoreTests {
    @Test func theIdentityIsMadeOnceWithMode0600AndKeptAcrossRenames() throws {
        let directory = TemporaryDirectory()
        let store = DeviceStore(directory: directory.path.appending("accounts"))
        let (first, created) = try store.identity(name: "Ada's ThinkPad")
        #expect(created)
        #expect(directory.mode(of: "accounts/\(DeviceStore.identityFileName)") == 0o600)
        let (again, createdAgain) = try store.identity(name: "Renamed")
        #expect(!createdAgain)
        #expect(again.card.publicKey == first.card.publicKey)
        #expect(again.card.name == "Renamed")
        // Not an account key file: the account list does not show it.
        #expect(try AccountKeyStore(directory: store.directory).list().isEmpty)
    }

    @Test func aPendingRekeyRoundTripsWithMode0600AndGoes() throws {
        let directory = TemporaryDirectory()
        let store = DeviceStore(directory: directory.path)
        #expect(try store.pendingRekey(account: "home") == nil)
        let old = try AccountKey(name: "home", secret: [UInt8](repeating: 0x11, count: 32))
        let new = try AccountKey(name: "home", secret: [UInt8](repeating: 0x12, count: 32))
        let rekey = PendingRekey(
            retired: old, newAccount: new.id, removed: ["0011223344556677"], started: 1_700_000_000,
            deliveries: [.init(device: "8899aabbccddeeff", envelope: [UInt8](repeating: 0xab, count: 126))])
        #expect(rekey.expires == 1_700_000_000 + 14 * 24 * 3600)
        try store.save(rekey, account: "home")
        #expect(directory.mode(of: "home.\(DeviceStore.rekeyExtension)") == 0o600)
        #expect(try store.pendingRekey(account: "home") == rekey)
        // Not an account key file.
        #expect(try AccountKeyStore(directory: store.directory).list().isEmpty)
        try store.removePendingRekey(account: "home")
        #expect(try store.pendingRekey(account: "home") == nil)
        try store.removePendingRekey(account: "home")
    }

    @Test func aCorruptPendingRekeyIsAnErrorThatDoesNotShowTheFile() throws {
        let directory = TemporaryDirectory()
        let store = DeviceStore(directory: directory.path)
        let path = directory.path.appending("home.\(DeviceStore.rekeyExtension)")
        let secret = String(repeating: "ab", count: 32)
        try AtomicFile.write(Array("{\"version\":1,\"retiredKey\":\"\(secret)\"}".utf8), to: path, mode: 0o600)
        #expect {
            try store.pendingRekey(account: "home")
        } throws: { error in
            "\(error)".contains(path.string) && !"\(error)".contains(secret)
        }
        chmod(path.string, 0o644)
        #expect(throws: DeviceStoreError.self) { try store.pendingRekey(account: "home") }
    }

    @Test func anIdentityFileOthersCanReadIsRefusedAndNotReplaced() throws {
        let directory = TemporaryDirectory()
        let store = DeviceStore(directory: directory.path)
        let (first, _) = try store.identity(name: "x")
        let path = directory.path.appending(DeviceStore.identityFileName).string
        chmod(path, 0o644)
        #expect(throws: DeviceStoreError.self) { try store.identity(name: "x") }
        chmod(path, 0o600)
        #expect(try store.identity(name: "x").identity.card == first.card)
    }

    @Test func aCorruptIdentityIsAnErrorThatDoesNotShowTheFile() throws {
        let directory = TemporaryDirectory()
        let store = DeviceStore(directory: directory.path)
        let path = directory.path.appending(DeviceStore.identityFileName)
        let text = "version = 1\nprivate-key = \(String(repeating: "ab", count: 31))\n"
        try AtomicFile.write(Array(text.utf8), to: path, mode: 0o600)
        do {
            _ = try store.identity(name: "x")
            Issue.record("a corrupt identity was accepted")
        } catch {
            #expect("\(error)".contains(path.string))
            #expect(!"\(error)".contains("abab"))
        }
    }

    @Test func aRosterRoundTripsWithMode0600AndIsRemovedWithItsAccount() throws {
        let directory = TemporaryDirectory()
        let store = DeviceStore(directory: directory.path)
        #expect(try store.roster(account: "home").devices.isEmpty)
        var roster = DeviceRoster()
        let card = try DeviceIdentity.generate(name: "Ada's ThinkPad").card
        roster.learn(card, now: 1_700_000_000)
        try store.save(roster, account: "home")
        #expect(directory.mode(of: "home.\(DeviceStore.rosterExtension)") == 0o600)
        #expect(try store.roster(account: "home") == roster)
        try store.removeRoster(account: "home")
        #expect(try store.roster(account: "home").devices.isEmpty)
        try store.removeRoster(account: "home")
    }

    @Test func aCorruptRosterIsAnErrorNamingTheFile() throws {
        let directory = TemporaryDirectory()
        let store = DeviceStore(directory: directory.path)
        let path = directory.path.appending("home.\(DeviceStore.rosterExtension)")
        try AtomicFile.write(Array(#"{"devices":[{"card":{"publicKey":"00","name":"x"},"introduced":1}]}"#.utf8), to: path, mode: 0o600)
        #expect(throws: DeviceStoreError.self) { try store.roster(account: "home") }
        #expect(throws: DeviceStoreError.self) { try store.roster(account: "../home") }
    }
}
