import Crypto
import Testing

@testable import HandoffCore

/// Removing a device: the rekey envelope (docs/devices.md, section 7) and the rekey exchange,
/// kind 0x12 (docs/continuation.md, section 11). R removes X; D remains.
@Suite struct RekeyTests {
    static let identityR = try! DeviceIdentity(privateKey: [UInt8](repeating: 0x21, count: 32), name: "Remover")
    static let identityD = try! DeviceIdentity(privateKey: [UInt8](repeating: 0x22, count: 32), name: "Desk")
    static let identityE = try! DeviceIdentity(privateKey: [UInt8](repeating: 0x23, count: 32), name: "Else")
    static let identityX = try! DeviceIdentity(privateKey: [UInt8](repeating: 0x24, count: 32), name: "Lost")
    static let newSecret = [UInt8](0x40..<0x60)
    static let newAccount = try! AccountKey(name: Fixture.accountA.name, secret: newSecret)
    static var fpR: String { identityR.card.fingerprint }
    static var fpD: String { identityD.card.fingerprint }
    static var fpX: String { identityX.card.fingerprint }

    static func envelope(
        removing: [String] = [fpX], to recipient: DeviceCard = identityD.card, old: AccountKey = Fixture.accountA
    ) throws(RekeyError) -> RekeyEnvelope {
        var generator = SeededGenerator(seed: 3)
        return try RekeyEnvelope.seal(
            newAccount: newAccount, removing: removing, from: identityR, to: recipient, oldAccount: old,
            using: &generator)
    }

    static func opening(
        _ bytes: [UInt8], from sender: DeviceCard = identityR.card, to identity: DeviceIdentity = identityD,
        old: AccountKey = Fixture.accountA
    ) -> Result<RekeyEnvelope.Contents, RekeyError> {
        Result { () throws(RekeyError) in try RekeyEnvelope.open(bytes, from: sender, to: identity, oldAccount: old) }
    }

    static func error(_ result: Result<RekeyEnvelope.Contents, RekeyError>) -> RekeyError? {
        if case .failure(let error) = result { return error }
        return nil
    }

    /// Seals any plaintext the way an envelope from R to D is sealed: for the checks after authentication.
    static func crafted(_ plaintext: [UInt8], version: UInt8 = 1) -> [UInt8] {
        let keys = try! RekeyEnvelope.Keys(
            identity: identityR, peer: identityD.card.publicKey, senderKey: identityR.card.publicKey,
            recipientKey: identityD.card.publicKey, oldAccount: Fixture.accountA.id)
        let nonce = [UInt8](repeating: 7, count: 12)
        let box = keys.envelope.withUnsafeBytes { key in
            try! ChaChaPoly.seal(
                plaintext, using: SymmetricKey(data: key), nonce: try! ChaChaPoly.Nonce(data: nonce),
                authenticating: RekeyFormat.envelopeLabel + [version])
        }
        return [version] + nonce + Array(box.ciphertext) + Array(box.tag)
    }

    static func plaintext(secret: [UInt8] = newSecret, count: UInt8, entries: [[UInt8]]) -> [UInt8] {
        let body = secret + [count] + entries.flatMap { $0 }
        return body + [UInt8](repeating: 0, count: RekeyFormat.plaintextLength - body.count)
    }

    // MARK: The envelope

    @Test func anEnvelopeOpensForItsRecipientWithTheNewKeyAndTheRemovedList() throws {
        let envelope = try Self.envelope()
        #expect(envelope.bytes.count == RekeyFormat.envelopeLength)
        #expect(RekeyFormat.envelopeLength == 126)
        #expect(envelope.bytes[0] == 1)
        #expect(envelope.sender == Self.fpR && envelope.recipient == Self.fpD)
        #expect(envelope.newAccount == Self.newAccount.id && envelope.removed == [Self.fpX])
        let contents = try Self.opening(envelope.bytes).get()
        #expect(contents.newAccount == Self.newAccount)
        #expect(contents.newAccount.name == Fixture.accountA.name)
        #expect(contents.removed == [Self.fpX])
        #expect(contents.sender == Self.fpR)
        // Both sides derive the same acknowledgement key.
        let nonce = [UInt8](repeating: 9, count: 16)
        #expect(contents.acknowledgement(requestNonce: nonce) == envelope.acknowledgement(requestNonce: nonce))
        #expect(contents.acknowledgement(requestNonce: nonce) != envelope.acknowledgement(requestNonce: [UInt8](repeating: 8, count: 16)))
    }

    @Test func anEnvelopeOpensForNoOtherRecipientSenderOrOldAccount() throws {
        let envelope = try Self.envelope()
        // Another recipient (E), or the removed device (X), with their own private keys.
        #expect(Self.error(Self.opening(envelope.bytes, to: Self.identityE)) == .authenticationFailed)
        #expect(Self.error(Self.opening(envelope.bytes, to: Self.identityX)) == .authenticationFailed)
        // D believes another device sealed it.
        #expect(Self.error(Self.opening(envelope.bytes, from: Self.identityE.card)) == .authenticationFailed)
        // Moved to another account.
        #expect(Self.error(Self.opening(envelope.bytes, old: Fixture.accountB)) == .authenticationFailed)
        // Every flipped bit after the version.
        for index in 1..<envelope.bytes.count {
            var tampered = envelope.bytes
            tampered[index] ^= 0x04
            #expect(Self.error(Self.opening(tampered)) == .authenticationFailed, "byte \(index)")
        }
    }

    @Test func aTruncatedPaddedOrOtherVersionEnvelopeIsMalformed() throws {
        let bytes = try Self.envelope().bytes
        #expect(Self.error(Self.opening(Array(bytes.dropLast()))) == .malformed("125 bytes"))
        #expect(Self.error(Self.opening(bytes + [0])) == .malformed("127 bytes"))
        #expect(Self.error(Self.opening([])) == .malformed("0 bytes"))
        #expect(Self.error(Self.opening([2] + bytes.dropFirst())) == .malformed("version 2"))
        // A version 2 envelope sealed as such is refused before it is opened.
        #expect(Self.error(Self.opening(Self.crafted(Self.plaintext(count: 0, entries: []), version: 2))) == .malformed("version 2"))
        // A low-order sender key gives no shared secret.
        let lowOrder = try DeviceCard(publicKey: [UInt8](repeating: 0, count: 32), name: "Zero")
        #expect(Self.error(Self.opening(bytes, from: lowOrder)) == .invalidKey)
        #expect(throws: RekeyError.invalidKey) { try Self.envelope(to: lowOrder) }
    }

    @Test func theRemovedListRoundTripsUpToItsBound() throws {
        let eight = [Self.fpX] + (0..<7).map { Hex.encode(UInt64(0x0102_0304_0506_0700 + $0), width: 16) }
        let envelope = try Self.envelope(removing: eight)
        #expect(try Self.opening(envelope.bytes).get().removed == eight)
        #expect(try Self.opening(Self.envelope(removing: []).bytes).get().removed == [])
        // Upper case is read and normalised.
        #expect(try Self.envelope(removing: [Self.fpX.uppercased()]).removed == [Self.fpX])
        #expect(throws: RekeyError.tooManyRemoved(9)) { try Self.envelope(removing: eight + ["0000000000000009"]) }
        #expect(throws: RekeyError.recipientRemoved) { try Self.envelope(removing: [Self.fpD]) }
        #expect(throws: RekeyError.senderRemoved) { try Self.envelope(removing: [Self.fpX, Self.fpR]) }
        #expect(throws: RekeyError.malformed("a device removed twice")) { try Self.envelope(removing: [Self.fpX, Self.fpX]) }
        #expect(throws: RekeyError.invalidFingerprint("xyz")) { try Self.envelope(removing: ["xyz"]) }
        #expect(throws: RekeyError.unchangedKey) { try Self.envelope(old: Self.newAccount) }
    }

    @Test func theRecipientChecksTheRemovedListAfterOpening() throws {
        let x = Self.identityX.card.fingerprintBytes
        let other = [UInt8](repeating: 5, count: 8)
        #expect(try Self.opening(Self.crafted(Self.plaintext(count: 1, entries: [x]))).get().removed == [Self.fpX])
        let nine = Self.plaintext(count: 9, entries: [])
        #expect(Self.error(Self.opening(Self.crafted(nine))) == .tooManyRemoved(9))
        var padded = Self.plaintext(count: 1, entries: [x])
        padded[RekeyFormat.plaintextLength - 1] = 1
        #expect(Self.error(Self.opening(Self.crafted(padded))) == .malformed("padding that is not zero"))
        #expect(Self.error(Self.opening(Self.crafted(Self.plaintext(count: 2, entries: [x, x])))) == .malformed("a device removed twice"))
        #expect(Self.error(Self.opening(Self.crafted(Self.plaintext(count: 2, entries: [other, Self.identityD.card.fingerprintBytes])))) == .recipientRemoved)
        #expect(Self.error(Self.opening(Self.crafted(Self.plaintext(count: 1, entries: [Self.identityR.card.fingerprintBytes])))) == .senderRemoved)
        #expect(Self.error(Self.opening(Self.crafted(Self.plaintext(secret: Fixture.secretA, count: 0, entries: [])))) == .unchangedKey)
    }

    @Test func noDescriptionShowsAKey() throws {
        let envelope = try Self.envelope()
        let contents = try Self.opening(envelope.bytes).get()
        let secretHex = Hex.encode(Self.newSecret)
        for text in [
            "\(envelope)", String(reflecting: envelope), "\(Mirror(reflecting: envelope).children.map { "\($0.value)" })",
            "\(contents)", String(reflecting: contents), "\(Mirror(reflecting: contents).children.map { "\($0.value)" })",
        ] {
            #expect(!text.contains(secretHex.prefix(12)) && !text.contains("64, 65, 66"), "\(text)")
            #expect(text.contains(Self.fpR), "\(text)")
        }
        for error in [RekeyError.malformed("x"), .invalidKey, .authenticationFailed, .tooManyRemoved(9), .recipientRemoved,
            .senderRemoved, .unchangedKey, .unknownSender, .nothingRemoved, .invalidFingerprint("x")]
        {
            #expect(!error.description.isEmpty)
        }
    }

    // MARK: The plan

    static let rosterOfR = DeviceRoster(devices: [
        .init(card: identityD.card, introduced: 1), .init(card: identityX.card, introduced: 2),
        .init(card: identityE.card, introduced: 3),
    ])

    @Test func aPlanSealsTheNewKeyToEveryRemainingDeviceAndNoneToTheRemoved() throws {
        var generator = SeededGenerator(seed: 11)
        let plan = try RekeyPlan(
            account: Fixture.accountA, removing: [Self.fpX], roster: Self.rosterOfR, identity: Self.identityR,
            using: &generator)
        #expect(plan.newAccount.name == Fixture.accountA.name && plan.newAccount.id != Fixture.accountA.id)
        #expect(plan.removed == [Self.fpX])
        #expect(plan.envelopes.map(\.recipient) == [Self.fpD, Self.identityE.card.fingerprint])
        #expect(plan.envelope(for: Self.fpX) == nil)
        for (identity, envelope) in zip([Self.identityD, Self.identityE], plan.envelopes) {
            let contents = try Self.opening(envelope.bytes, to: identity).get()
            #expect(contents.newAccount == plan.newAccount && contents.removed == [Self.fpX])
            #expect(Self.error(Self.opening(envelope.bytes, to: Self.identityX)) == .authenticationFailed)
        }
        // Another generator, another key.
        var other = SeededGenerator(seed: 12)
        let second = try RekeyPlan(
            account: Fixture.accountA, removing: [Self.fpX], roster: Self.rosterOfR, identity: Self.identityR,
            using: &other)
        #expect(second.newAccount.id != plan.newAccount.id)
    }

    @Test func aPlanRemovesSomethingButNeverItsOwnDevice() {
        var generator = SeededGenerator(seed: 11)
        #expect(throws: RekeyError.nothingRemoved) {
            try RekeyPlan(account: Fixture.accountA, removing: [], roster: Self.rosterOfR, identity: Self.identityR, using: &generator)
        }
        #expect(throws: RekeyError.senderRemoved) {
            try RekeyPlan(account: Fixture.accountA, removing: [Self.fpR], roster: Self.rosterOfR, identity: Self.identityR, using: &generator)
        }
        #expect(throws: RekeyError.tooManyRemoved(9)) {
            try RekeyPlan(
                account: Fixture.accountA, removing: (0..<9).map { Hex.encode(UInt64($0), width: 16) }, roster: Self.rosterOfR,
                identity: Self.identityR, using: &generator)
        }
    }

    // MARK: The exchange (kind 0x12)

    /// D advertises a beacon under the old account; R recognised it.
    struct Exchange {
        var server: ContinuationServer
        var generator = SeededGenerator(seed: 5)
        let beacon: RecognizedBeacon
        var rosterOfD = DeviceRoster(devices: [.init(card: RekeyTests.identityR.card, introduced: 1)])

        init(acceptsRekeys: Bool = true) throws {
            server = ContinuationServer(configuration: .default)
            server.acceptsRekeys = acceptsRekeys
            var encoder = BeaconEncoder()
            let payload = encoder.encode(
                account: Fixture.accountA, activityType: Fixture.browse, flags: [.hasPayload], now: Fixture.now,
                using: &generator)
            server.didAdvertise(payload, account: Fixture.accountA, activity: "a1", now: Fixture.now)
            var recognizer = BeaconRecognizer(accounts: [Fixture.accountA])
            beacon = try recognizer.recognize(payload, now: Fixture.now)
        }

        mutating func pending(
            _ envelope: RekeyEnvelope? = nil, account: AccountKey = Fixture.accountA
        ) throws -> PendingContinuation {
            PendingContinuation(
                beacon: beacon, tag: beacon.tagBytes, account: account, requester: DeviceID(rawValue: 0x0c0c_0c0c),
                rekey: try envelope ?? RekeyTests.envelope(), using: &generator)
        }

        mutating func status(_ request: [UInt8]) -> ExchangeStatus {
            do throws(ExchangeStatus) {
                _ = try server.accept(request, now: Fixture.now)
                return .ok
            } catch {
                return error
            }
        }
    }

    static func failure(_ body: () throws(ExchangeError) -> Void) -> ExchangeError? {
        do throws(ExchangeError) {
            try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func aRekeyRoundTripsAndTheAcknowledgementProvesTheInstall() throws {
        var exchange = try Exchange()
        let pending = try exchange.pending()
        #expect(pending.isRekey && !pending.isIntroduction)
        #expect(pending.request.count == ContinuationFormat.rekeyRequestLength)
        #expect(pending.request.count == 193 && pending.request[0] == 0x12)
        let accepted = try exchange.server.accept(pending.request, now: Fixture.now)
        #expect(accepted.rekey?.sender == Self.fpR)
        #expect(accepted.requesterCard == nil)
        #expect(accepted.requester == DeviceID(rawValue: 0x0c0c_0c0c) && accepted.session == pending.session)
        let contents = try exchange.server.openRekey(accepted, identity: Self.identityD, roster: exchange.rosterOfD)
        #expect(contents.newAccount == Self.newAccount && contents.removed == [Self.fpX])
        let response = exchange.server.respond(to: accepted, installed: contents, using: &exchange.generator)
        #expect(response.count == ContinuationFormat.rekeyResponseLength && response.count == 62)
        #expect(Array(response.prefix(2)) == [0x12, 0])
        try pending.openRekey(response: response)
    }

    @Test func aRestoredEnvelopeHasTheSameAcknowledgementAsTheSealedOne() throws {
        let sealed = try Self.envelope()
        let restored = try RekeyEnvelope.restore(
            bytes: sealed.bytes, newAccount: sealed.newAccount, removed: sealed.removed, from: Self.identityR,
            to: Self.identityD.card, oldAccount: Fixture.accountA.id)
        let nonce = [UInt8](repeating: 7, count: 16)
        #expect(restored.acknowledgement(requestNonce: nonce) == sealed.acknowledgement(requestNonce: nonce))
        #expect(restored.recipient == Self.fpD && restored.sender == Self.fpR && restored.bytes == sealed.bytes)
        // Bound to another old account or recipient, the acknowledgement differs.
        let other = try RekeyEnvelope.restore(
            bytes: sealed.bytes, newAccount: sealed.newAccount, removed: sealed.removed, from: Self.identityR,
            to: Self.identityE.card, oldAccount: Fixture.accountA.id)
        #expect(other.acknowledgement(requestNonce: nonce) != sealed.acknowledgement(requestNonce: nonce))
        #expect(throws: RekeyError.self) {
            try RekeyEnvelope.restore(
                bytes: Array(sealed.bytes.dropLast()), newAccount: sealed.newAccount, removed: [], from: Self.identityR,
                to: Self.identityD.card, oldAccount: Fixture.accountA.id)
        }
    }

    @Test func aDeviceThatDoesNotAcceptRekeysRefusesThemAsMalformed() throws {
        var exchange = try Exchange(acceptsRekeys: false)
        #expect(exchange.status(try exchange.pending().request) == .malformed)
    }

    @Test func rekeyRequestsAreCheckedLikeEveryRequest() throws {
        var exchange = try Exchange()
        let good = try exchange.pending().request
        #expect(exchange.status(Array(good.dropLast())) == .malformed)
        #expect(exchange.status(good + [0]) == .malformed)
        // Another account's key, with the tag copied from the air.
        #expect(exchange.status(try exchange.pending(account: Fixture.accountB).request) == .authenticationFailed)
        // Any flipped bit after the tag.
        for index in 5..<good.count {
            var tampered = good
            tampered[index] ^= 0x01
            #expect(exchange.status(tampered) == .authenticationFailed, "byte \(index)")
        }
        // Another tag.
        var otherTag = good
        otherTag[1] ^= 0x01
        #expect(exchange.status(otherTag) == .unknownBeacon)
        // Replayed, and the window is shared with the other kinds.
        #expect(exchange.status(good) == .ok)
        #expect(exchange.status(good) == .replayed)
    }

    @Test func rekeysAndTheOtherKindsCannotStandInForEachOther() throws {
        var exchange = try Exchange()
        let rekey = try exchange.pending()
        // The rekey request under another kind's byte: wrong length for that kind.
        for kind: UInt8 in [0x10, 0x11, 0x13] {
            #expect(exchange.status([kind] + rekey.request.dropFirst()) == .malformed)
        }
        // An introduction's request relabelled 0x12 and cut or padded to 193 bytes does not open.
        let introduction = PendingContinuation(
            beacon: exchange.beacon, tag: exchange.beacon.tagBytes, account: Fixture.accountA,
            requester: DeviceID(rawValue: 1), introducing: Self.identityR.card, using: &exchange.generator)
        let relabelled = [0x12] + Array(introduction.request[1..<ContinuationFormat.rekeyRequestLength])
        #expect(exchange.status(relabelled) == .authenticationFailed)
        // A continuation's or an introduction's response, or a refusal of another kind, is not a rekey's.
        let continuation = PendingContinuation(
            beacon: exchange.beacon, tag: exchange.beacon.tagBytes, account: Fixture.accountA,
            requester: DeviceID(rawValue: 1), using: &exchange.generator)
        let accepted = try exchange.server.accept(continuation.request, now: Fixture.now)
        let payload = try ActivityPayload(type: Fixture.browse)
        let response = exchange.server.respond(to: accepted, with: payload, using: &exchange.generator)
        #expect(Self.failure { () throws(ExchangeError) in try rekey.openRekey(response: response) } == .malformedResponse("version byte 0x10"))
        var relabelledResponse = response
        relabelledResponse[0] = 0x12
        #expect(Self.failure { () throws(ExchangeError) in try rekey.openRekey(response: relabelledResponse) } == .authenticationFailed)
        #expect(Self.failure { () throws(ExchangeError) in
            try rekey.openRekey(response: ContinuationServer.refusal(.invalidEnvelope))
        } == .malformedResponse("version byte 0x10"))
        for status in ExchangeStatus.allCases where status != .ok {
            #expect(Self.failure { () throws(ExchangeError) in
                try rekey.openRekey(response: ContinuationServer.refusal(status, kind: 0x12))
            } == .refused(status))
        }
        // A rekey's response does not open for a continuation.
        let rekeyAccepted = try exchange.server.accept(rekey.request, now: Fixture.now)
        let contents = try exchange.server.openRekey(rekeyAccepted, identity: Self.identityD, roster: exchange.rosterOfD)
        var rekeyResponse = exchange.server.respond(to: rekeyAccepted, installed: contents, using: &exchange.generator)
        rekeyResponse[0] = 0x10
        #expect(Self.failure { () throws(ExchangeError) in _ = try continuation.open(response: rekeyResponse) } == .authenticationFailed)
    }

    @Test func theOriginRefusesAnEnvelopeFromAStrangerOrNotForIt() throws {
        var exchange = try Exchange()
        // D does not know R.
        let unknown = try exchange.server.accept(try exchange.pending().request, now: Fixture.now)
        let refused = Result { () throws(RekeyError) in
            try exchange.server.openRekey(unknown, identity: Self.identityD, roster: DeviceRoster())
        }
        #expect(Self.errorOf(refused) == .unknownSender)
        #expect(RekeyError.unknownSender.status == .unknownDevice)
        // An envelope sealed to E delivered to D.
        let misaddressed = try exchange.server.accept(
            try exchange.pending(Self.envelope(to: Self.identityE.card)).request, now: Fixture.now)
        let wrong = Result { () throws(RekeyError) in
            try exchange.server.openRekey(misaddressed, identity: Self.identityD, roster: exchange.rosterOfD)
        }
        #expect(Self.errorOf(wrong) == .authenticationFailed)
        #expect(RekeyError.authenticationFailed.status == .invalidEnvelope)
        // An envelope bound to another old account, delivered under this one.
        let moved = try exchange.server.accept(
            try exchange.pending(Self.envelope(old: Fixture.accountB)).request, now: Fixture.now)
        #expect(Self.errorOf(Result { () throws(RekeyError) in
            try exchange.server.openRekey(moved, identity: Self.identityD, roster: exchange.rosterOfD)
        }) == .authenticationFailed)
    }

    @Test func aDeviceInTheMiddleCannotForgeTheAcknowledgement() throws {
        var exchange = try Exchange()
        let pending = try exchange.pending()
        let accepted = try exchange.server.accept(pending.request, now: Fixture.now)
        // X holds the old account key, so it can seal a response, but not D's acknowledgement.
        let forged = exchange.server.seal(
            [UInt8](repeating: 0, count: 32), kind: 0x12, label: ContinuationFormat.rekeyResponseLabel, for: accepted,
            using: &exchange.generator)
        #expect(Self.failure { () throws(ExchangeError) in try pending.openRekey(response: forged) } == .invalidAcknowledgement)
        let short = exchange.server.seal(
            [UInt8](repeating: 0, count: 31), kind: 0x12, label: ContinuationFormat.rekeyResponseLabel, for: accepted,
            using: &exchange.generator)
        #expect(Self.failure { () throws(ExchangeError) in try pending.openRekey(response: short) }
            == .malformedResponse("an acknowledgement of 31 bytes"))
        // The acknowledgement of another request (same envelope) does not do.
        let second = try exchange.pending()
        let contents = try exchange.server.openRekey(accepted, identity: Self.identityD, roster: exchange.rosterOfD)
        let response = exchange.server.respond(to: accepted, installed: contents, using: &exchange.generator)
        #expect(Self.failure { () throws(ExchangeError) in try second.openRekey(response: response) } == .authenticationFailed)
    }

    static func errorOf(_ result: Result<RekeyEnvelope.Contents, RekeyError>) -> RekeyError? { error(result) }
}
