import Testing

@testable import HandoffCore

/// Device identities, cards, derived beacon identifiers, rosters and the
/// introduction exchange (docs/devices.md, docs/continuation.md section 9).
@Suite struct DeviceTests {
    static let keyA: [UInt8] = Array(repeating: 0x41, count: 32)
    static let keyB: [UInt8] = Array(repeating: 0x42, count: 32)
    static let identityA = try! DeviceIdentity(privateKey: keyA, name: "Ada's ThinkPad")
    static let identityB = try! DeviceIdentity(privateKey: keyB, name: "Ada's desktop")

    // MARK: Cards and names

    @Test func aCardRoundTripsAndItsDigestFollowsTheName() throws {
        let card = Self.identityA.card
        #expect(try DeviceCard(decoding: card.encoded()) == card)
        #expect(card.encoded().count == 1 + 32 + 1 + "Ada's ThinkPad".utf8.count)
        let renamed = try Self.identityA.renamed(to: "Ada's old ThinkPad").card
        #expect(renamed.publicKey == card.publicKey)
        #expect(renamed.fingerprint == card.fingerprint)
        #expect(renamed.digest != card.digest)
        #expect(card.fingerprint.count == 16)
    }

    static let zeros = [UInt8](repeating: 0, count: 32)
    static let malformedCards: [(bytes: [UInt8], what: String)] = [
        ([], "no bytes"),
        ([2] + zeros + [0], "version 2"),
        ([1] + zeros + [3, 0x61, 0x62], "3 bytes missing one"),
        ([1] + zeros + [1, 0x61, 0x62], "a trailing byte"),
        ([1] + zeros + [1, 0xFF], "not UTF-8"),
        ([1] + zeros + [0], "an empty name"),
        ([1] + zeros + [2, 0x61, 0x0A], "a line break"),
    ]

    @Test func aMalformedCardIsRefused() {
        for (bytes, what) in Self.malformedCards {
            #expect(throws: DeviceCardError.self, "\(what)") { try DeviceCard(decoding: bytes) }
        }
    }

    @Test func aPaddedCardHasOneLengthAndZeroPadding() throws {
        let padded = Self.identityA.card.paddedEncoding()
        #expect(padded.count == DeviceCard.maximumEncodedLength)
        #expect(try DeviceCard(decodingPadded: padded) == Self.identityA.card)
        var dirty = padded
        dirty[dirty.count - 1] = 1
        #expect(throws: DeviceCardError.self) { try DeviceCard(decodingPadded: dirty) }
        #expect(throws: DeviceCardError.self) { try DeviceCard(decodingPadded: padded.dropLast()) }
        #expect(throws: DeviceCardError.self) { try DeviceCard(decodingPadded: Self.identityA.card.encoded()) }
    }

    @Test func namesFollowTheRules() {
        #expect(throws: Never.self) { try DeviceCard.validate(name: "Ada's ThinkPad / work") }
        #expect(throws: Never.self) { try DeviceCard.validate(name: String(repeating: "é", count: 64)) }
        for bad in ["", " leading", "trailing ", "tab\there", "nul\u{0}", "line\u{2028}sep", String(repeating: "x", count: 65)] {
            #expect(throws: DeviceCardError.self, "\(bad.debugDescription)") { try DeviceCard.validate(name: bad) }
        }
    }

    // MARK: The identity file

    @Test func theIdentityFileRoundTripsAndNothingShowsTheKey() throws {
        let text = Self.identityA.fileContents()
        #expect(text.hasPrefix(DeviceIdentity.fileHeader + "\n"))
        let again = try DeviceIdentity(fileContents: text, name: "Ada's ThinkPad")
        #expect(again.card == Self.identityA.card)
        let hex = Hex.encode(Self.keyA)
        #expect(text.contains(hex))
        for shown in [Self.identityA.description, String(reflecting: Self.identityA), "\(Mirror(reflecting: Self.identityA).children.map(\.value))"] {
            #expect(!shown.contains(hex))
            #expect(!shown.contains(hex.uppercased()))
        }
    }

    @Test(arguments: [
        "version = 1\n", "private-key = \(String(repeating: "41", count: 32))\n",
        "version = 2\nprivate-key = \(String(repeating: "41", count: 32))\n",
        "version = 1\nprivate-key = \(String(repeating: "41", count: 31))\n",
        "version = 1\nversion = 1\nprivate-key = \(String(repeating: "41", count: 32))\n",
        "version = 1\nname = x\nprivate-key = \(String(repeating: "41", count: 32))\n",
        "version = 1\nprivate-key \(String(repeating: "41", count: 32))\n",
    ])
    func aBadIdentityFileIsRefusedWithoutTheKeyInTheError(text: String) {
        do {
            _ = try DeviceIdentity(fileContents: text, name: "x")
            Issue.record("accepted: \(text)")
        } catch {
            #expect(!"\(error)".contains("4141"))
        }
    }

    // MARK: Derived identifiers

    @Test func theKnownPartOfTheBeaconsDeviceNamesTheDeviceInTheRoster() throws {
        var generator = SeededGenerator(seed: 3)
        var encoder = BeaconEncoder()
        encoder.cardDigest = Self.identityA.card.digest
        let payload = encoder.encode(
            account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now, using: &generator)
        var recognizer = BeaconRecognizer(accounts: [Fixture.accountA])
        let beacon = try recognizer.recognize(payload, now: Fixture.now)
        let known = DeviceID.knownPart(cardDigest: Self.identityA.card.digest, schedule: Fixture.accountA.schedule, epoch: beacon.epoch)
        #expect(beacon.device.knownPart == known)

        var roster = DeviceRoster()
        roster.learn(Self.identityB.card, now: 1)
        #expect(roster.device(sending: beacon.device, schedule: Fixture.accountA.schedule, epoch: beacon.epoch) == nil)
        roster.learn(Self.identityA.card, now: 2)
        let found = roster.device(sending: beacon.device, schedule: Fixture.accountA.schedule, epoch: beacon.epoch)
        #expect(found?.card == Self.identityA.card)
        // Another account's key, or another epoch, derives other known parts.
        #expect(
            DeviceID.knownPart(cardDigest: Self.identityA.card.digest, schedule: Fixture.accountB.schedule, epoch: beacon.epoch)
                != known)
        #expect(
            DeviceID.knownPart(
                cardDigest: Self.identityA.card.digest, schedule: Fixture.accountA.schedule, epoch: beacon.epoch.advanced(by: 1))
                != known)
    }

    @Test func aRestartWithinTheEpochKeepsTheKnownPartAndDrawsANewIdentity() {
        func device(seed: UInt64) -> DeviceID {
            var generator = SeededGenerator(seed: seed)
            var encoder = BeaconEncoder()
            encoder.cardDigest = Self.identityA.card.digest
            _ = encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now, using: &generator)
            return encoder.currentOrigin(for: Fixture.accountA.id)!.device
        }
        let first = device(seed: 1)
        let second = device(seed: 2)
        #expect(first.knownPart == second.knownPart)
        #expect(first != second)
    }

    @Test func withoutACardTheIdentifierIsAsBefore() {
        func device(digest: [UInt8]?) -> DeviceID {
            var generator = SeededGenerator(seed: 9)
            var encoder = BeaconEncoder()
            encoder.cardDigest = digest
            _ = encoder.encode(account: Fixture.accountA, activityType: Fixture.browse, flags: [], now: Fixture.now, using: &generator)
            return encoder.currentOrigin(for: Fixture.accountA.id)!.device
        }
        let plain = device(digest: nil)
        let derived = device(digest: Self.identityA.card.digest)
        #expect(plain.rawValue & 0xFFFF == derived.rawValue & 0xFFFF)
        #expect(plain != derived)
    }

    // MARK: Rosters

    @Test func aRosterLearnsRenamesForgetsAndKeepsItsCapacity() throws {
        var roster = DeviceRoster()
        let learned = roster.learn(Self.identityA.card, now: 10)
        let again = roster.learn(Self.identityA.card, now: 11)
        let renamed = roster.learn(try Self.identityA.renamed(to: "Renamed").card, now: 12)
        #expect(learned && !again && renamed)
        #expect(roster.devices.count == 1)
        #expect(roster.devices[0].card.name == "Renamed")
        #expect(roster.devices[0].introduced == 12)
        roster.heard(Self.identityA.card.publicKey, now: 20)
        #expect(roster.devices[0].lastHeard == 20)
        let removed = roster.remove(Self.identityA.card.publicKey)
        #expect(removed)
        #expect(roster.devices.isEmpty)
        for index in 0..<(DeviceRoster.capacity + 1) {
            let identity = try DeviceIdentity(privateKey: [UInt8](repeating: UInt8(index + 1), count: 32), name: "d\(index)")
            roster.learn(identity.card, now: Double(100 + index))
        }
        #expect(roster.devices.count == DeviceRoster.capacity)
        #expect(!roster.devices.contains { $0.card.name == "d0" })
    }

    // MARK: The introduction exchange

    @Test func anIntroductionCarriesBothCardsSealed() throws {
        var exchange = try ContinuationTests.Exchange()
        var generator = SeededGenerator(seed: 11)
        let pending = PendingContinuation(
            beacon: exchange.beacon, tag: exchange.tag, account: Fixture.accountA, requester: DeviceID(rawValue: 7),
            introducing: Self.identityB.card, using: &generator)
        #expect(pending.isIntroduction)
        #expect(pending.request[0] == 0x11)
        // Padded: the length says nothing about the name.
        #expect(pending.request.count == 59 + 234)
        // The card is not readable on the link.
        #expect(!pending.request.containsSubsequence(Array("Ada's desktop".utf8)))
        let accepted = try exchange.server.accept(pending.request, now: Fixture.now)
        #expect(accepted.requesterCard == Self.identityB.card)
        let response = exchange.server.respond(to: accepted, introducing: Self.identityA.card, using: &generator)
        #expect(response[0] == 0x11)
        #expect(try pending.openIntroduction(response: response) == Self.identityA.card)
        // A replayed introduction is refused like a replayed continuation.
        let again = exchange.status(pending.request)
        #expect(again == .replayed)
    }

    @Test func introductionsAndContinuationsCannotStandInForEachOther() throws {
        var exchange = try ContinuationTests.Exchange()
        var generator = SeededGenerator(seed: 12)
        let introduction = PendingContinuation(
            beacon: exchange.beacon, tag: exchange.tag, account: Fixture.accountA, requester: DeviceID(rawValue: 7),
            introducing: Self.identityB.card, using: &generator)
        // The kind byte turned into a continuation's: refused (length, then labels).
        var relabelled = introduction.request
        relabelled[0] = 0x10
        let relabelledStatus = exchange.status(relabelled)
        #expect(relabelledStatus == .malformed)
        // A continuation's request with the introduction's byte: the labels differ, so it does not open.
        let continuation = exchange.pending()
        var asIntroduction = continuation.request + Self.identityB.card.paddedEncoding()
        asIntroduction[0] = 0x11
        let asIntroductionStatus = exchange.status(asIntroduction)
        #expect(asIntroductionStatus == .authenticationFailed)
        // A continuation's response does not open as an introduction's.
        let accepted = try exchange.server.accept(continuation.request, now: Fixture.now)
        let response = exchange.server.respond(to: accepted, with: ContinuationTests.payload, using: &generator)
        var wrongKind = response
        wrongKind[0] = 0x11
        #expect(throws: ExchangeError.authenticationFailed) { try introduction.openIntroduction(response: wrongKind) }
        #expect(throws: ExchangeError.self) { try introduction.openIntroduction(response: response) }
    }

    @Test func aStrangerCannotIntroduceItself() throws {
        var exchange = try ContinuationTests.Exchange()
        var generator = SeededGenerator(seed: 13)
        let forged = PendingContinuation(
            beacon: exchange.beacon, tag: exchange.tag, account: Fixture.accountB, requester: DeviceID(rawValue: 7),
            introducing: Self.identityB.card, using: &generator)
        let status = exchange.status(forged.request)
        #expect(status == .authenticationFailed)
    }
}

extension Array where Element == UInt8 {
    func containsSubsequence(_ needle: [UInt8]) -> Bool {
        guard needle.count <= count else { return false }
        return (0...(count - needle.count)).contains { Array(self[$0..<($0 + needle.count)]) == needle }
    }
}
