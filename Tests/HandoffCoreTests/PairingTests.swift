import Crypto
import Testing

@testable import HandoffCore

/// The pairing protocol of docs/pairing.md: the offerer (O, responder) and the joiner (J, initiator).
@Suite struct PairingTests {
    static func hex(_ bytes: [UInt8]) -> String { bytes.map { String(format: "%02x", $0) }.joined() }

    static let advertisement = PairingAdvertisement(pairingID: bytes(hex: "a0a1a2a3a4a5a6a7"))

    /// Runs messages 1 to 4 between `joiner` and `offerer`; returns both numbers.
    static func agree(
        _ joiner: inout PairingJoiner, _ offerer: inout PairingOfferer
    ) throws -> (joiner: PairingNumber, offerer: PairingNumber) {
        let commit = try offerer.receiveStart(joiner.start)
        let nonceJ = try joiner.receiveCommit(commit)
        let (nonceO, offererNumber) = try offerer.receiveNonce(nonceJ)
        let joinerNumber = try joiner.receiveNonce(nonceO)
        return (joinerNumber, offererNumber)
    }

    static func caught<T>(_ body: () throws(PairingError) -> T) -> PairingError? {
        do throws(PairingError) {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    @Test func bothSidesShowTheSameNumberAndTheJoinerGetsTheAccount() throws {
        var generator = SeededGenerator(seed: 1)
        var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        let numbers = try Self.agree(&joiner, &offerer)
        #expect(numbers.joiner == numbers.offerer)
        #expect(joiner.number == offerer.number)
        #expect(try offerer.userConfirmed(using: &generator) == nil, "the joiner has not confirmed yet")
        let account = try #require(try offerer.receiveConfirm(joiner.confirm(), using: &generator))
        let (key, done) = try joiner.receiveAccount(account)
        #expect(key == Fixture.accountA)
        #expect(key.name == "Vector A")
        #expect(!offerer.isPaired)
        try offerer.receiveDone(done)
        #expect(offerer.isPaired)
    }

    /// The joiner's confirmation may come before the offering user's: the account still waits for both.
    @Test func theAccountWaitsForBothConfirmationsInEitherOrder() throws {
        var generator = SeededGenerator(seed: 2)
        var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountB, using: &generator)
        _ = try Self.agree(&joiner, &offerer)
        #expect(try offerer.receiveConfirm(joiner.confirm(), using: &generator) == nil, "the user has not said yes")
        let account = try #require(try offerer.userConfirmed(using: &generator))
        #expect(try joiner.receiveAccount(account).key == Fixture.accountB)
    }

    /// A user who refuses: the offerer ends with `refused`, and no account message exists to send.
    @Test func aRefusalSendsNoKey() throws {
        var generator = SeededGenerator(seed: 3)
        var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        _ = try Self.agree(&joiner, &offerer)
        let failed = offerer.end(.refused)
        #expect(failed == [0x10, 0x0F, 5])
        #expect(Self.caught { () throws(PairingError) in try offerer.receiveConfirm(joiner.confirm(), using: &generator) }
            == PairingError(.unexpected))
        #expect(Self.caught { () throws(PairingError) in try offerer.userConfirmed(using: &generator) }
            == PairingError(.unexpected))
        // The joiner reads the refusal as the peer's.
        var joiner2 = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        _ = try joiner2.receiveCommit(try PairingOfferer(
            advertisement: Self.advertisement, account: Fixture.accountA, using: &generator
        ).receiveStartCopy(joiner2.start))
        #expect(Self.caught { () throws(PairingError) in try joiner2.receiveNonce(failed) }
            == PairingError(.refused, fromPeer: true))
    }

    /// A device in the middle runs its own key agreement with each side, relaying everything else. The
    /// numbers then differ, except by chance (1 in 10^6): over 300 attempts they never agree.
    @Test func aDeviceInTheMiddleGetsDifferentNumbers() throws {
        var generator = SeededGenerator(seed: 4)
        var agreed = 0
        for _ in 0..<300 {
            var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
            var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
            // M plays the offerer towards J and the joiner towards O.
            var towardsJ = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountB, using: &generator)
            var towardsO = PairingJoiner(advertisement: Self.advertisement, using: &generator)
            let joinerNumbers = try Self.agree(&joiner, &towardsJ)
            let offererNumbers = try Self.agree(&towardsO, &offerer)
            #expect(joinerNumbers.joiner == joinerNumbers.offerer)
            #expect(offererNumbers.joiner == offererNumbers.offerer)
            if joinerNumbers.joiner == offererNumbers.offerer { agreed += 1 }
        }
        #expect(agreed == 0)
    }

    /// The best order for M: finish with O first (so it knows O's nonce and number), then commit towards J
    /// to that same nonce, relaying it. J's nonce, drawn after M committed, still makes J's number a
    /// fresh one: over 300 attempts the numbers never agree.
    @Test func aDeviceInTheMiddleThatRelaysTheNonceStillGetsDifferentNumbers() throws {
        var generator = SeededGenerator(seed: 10)
        var agreed = 0
        for _ in 0..<300 {
            var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
            var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
            var towardsO = PairingJoiner(advertisement: Self.advertisement, using: &generator)
            let offererNumber = try Self.agree(&towardsO, &offerer).offerer
            let nonceO = [0x10, 0x04] + offerer.nonce.withUnsafeBytes { Array($0) }
            // Towards J, M commits to O's nonce under its own key.
            var towardsJ = PairingOfferer(
                advertisement: Self.advertisement, account: Fixture.accountB, privateKey: Array(repeating: 7, count: 32),
                nonce: Array(nonceO[2...]))
            let commit = try towardsJ.receiveStart(joiner.start)
            let nonceJ = try joiner.receiveCommit(commit)
            _ = try towardsJ.receiveNonce(nonceJ)
            let joinerNumber = try joiner.receiveNonce(nonceO)
            if joinerNumber == offererNumber { agreed += 1 }
        }
        #expect(agreed == 0)
    }

    /// M relays J's key to O but replaces O's key, committing first and choosing its nonce after seeing
    /// J's (to steer the number): J's commitment check catches the change.
    @Test func aNonceChangedAfterTheCommitmentIsCaught() throws {
        var generator = SeededGenerator(seed: 5)
        var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        let commit = try offerer.receiveStart(joiner.start)
        let nonceJ = try joiner.receiveCommit(commit)
        var (nonceO, _) = try offerer.receiveNonce(nonceJ)
        nonceO[5] ^= 0x01
        #expect(Self.caught { () throws(PairingError) in try joiner.receiveNonce(nonceO) }
            == PairingError(.commitmentMismatch))
        #expect(joiner.number == nil, "no number is shown after a commitment mismatch")
        #expect(Self.caught { () throws(PairingError) in try joiner.confirm() } == PairingError(.unexpected))
    }

    /// A commitment over another public key (a key substituted after committing) is caught too.
    @Test func aKeyChangedAfterTheCommitmentIsCaught() throws {
        var generator = SeededGenerator(seed: 6)
        var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        var commit = try offerer.receiveStart(joiner.start)
        commit[2] ^= 0x40  // PKo's first byte
        let nonceJ = try joiner.receiveCommit(commit)
        let (nonceO, _) = try offerer.receiveNonce(nonceJ)
        #expect(Self.caught { () throws(PairingError) in try joiner.receiveNonce(nonceO) }
            == PairingError(.commitmentMismatch))
    }

    @Test func aForgedConfirmationOrAccountIsRefused() throws {
        var generator = SeededGenerator(seed: 7)
        var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        _ = try Self.agree(&joiner, &offerer)
        var confirm = try joiner.confirm()
        confirm[10] ^= 1
        #expect(Self.caught { () throws(PairingError) in try offerer.receiveConfirm(confirm, using: &generator) }
            == PairingError(.confirmationFailed))
        #expect(Self.caught { () throws(PairingError) in try offerer.userConfirmed(using: &generator) }
            == PairingError(.unexpected), "the attempt is over")

        var joiner2 = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        var offerer2 = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        _ = try Self.agree(&joiner2, &offerer2)
        _ = try offerer2.userConfirmed(using: &generator)
        var account = try #require(try offerer2.receiveConfirm(joiner2.confirm(), using: &generator))
        account[20] ^= 1
        #expect(Self.caught { () throws(PairingError) in try joiner2.receiveAccount(account) }
            == PairingError(.authenticationFailed))
    }

    @Test func messagesOutOfOrderOrMalformedEndTheAttempt() throws {
        var generator = SeededGenerator(seed: 8)
        var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        // nonceJ before start
        #expect(Self.caught { () throws(PairingError) in try offerer.receiveNonce([0x10, 0x03] + Array(repeating: 0, count: 16)) }
            == PairingError(.unexpected))
        var offerer2 = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        #expect(Self.caught { () throws(PairingError) in try offerer2.receiveStart(Array(joiner.start.dropLast())) }
            == PairingError(.malformed))
        // A start for another offer.
        var offerer3 = PairingOfferer(
            advertisement: PairingAdvertisement(pairingID: Array(repeating: 9, count: 8)), account: Fixture.accountA,
            using: &generator)
        #expect(Self.caught { () throws(PairingError) in try offerer3.receiveStart(joiner.start) } == PairingError(.unexpected))
        // A low-order public key (all zeros) gives an all-zero shared secret: malformed.
        var offerer4 = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        _ = try offerer4.receiveStart([0x10, 0x01] + Self.advertisement.pairingID + Array(repeating: 0, count: 32))
        #expect(Self.caught { () throws(PairingError) in try offerer4.receiveNonce([0x10, 0x03] + Array(repeating: 1, count: 16)) }
            == PairingError(.malformed))
        // The joiner: an account before confirming.
        let fresh = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        _ = try joiner.receiveCommit(try fresh.receiveStartCopy(joiner.start))
        #expect(Self.caught { () throws(PairingError) in try joiner.receiveAccount([0x10, 0x06] + Array(repeating: 0, count: 80)) }
            == PairingError(.unexpected))
    }

    @Test func theAdvertisementIsExactlyNineBytes() {
        #expect(Self.advertisement.payload == bytes(hex: "30a0a1a2a3a4a5a6a7"))
        #expect(PairingAdvertisement(payload: bytes(hex: "30a0a1a2a3a4a5a6a7")) == Self.advertisement)
        #expect(PairingAdvertisement(payload: bytes(hex: "31a0a1a2a3a4a5a6a7")) == nil)
        #expect(PairingAdvertisement(payload: bytes(hex: "30a0a1a2a3a4a5a6")) == nil)
        #expect(PairingAdvertisement(payload: bytes(hex: "30a0a1a2a3a4a5a6a7a8")) == nil)
        #expect(Self.advertisement.session == 0xa0a1_a2a3)
        #expect(PairingNumber(value: 42).description == "000042")
    }

    @Test func descriptionsShowNoSecret() throws {
        var generator = SeededGenerator(seed: 9)
        var joiner = PairingJoiner(advertisement: Self.advertisement, using: &generator)
        var offerer = PairingOfferer(advertisement: Self.advertisement, account: Fixture.accountA, using: &generator)
        _ = try Self.agree(&joiner, &offerer)
        for text in [String(describing: joiner), String(reflecting: joiner), String(describing: offerer),
            String(reflecting: offerer), "\(Mirror(reflecting: offerer).children.map { "\($0.value)" })"]
        {
            #expect(!text.contains("1f1e1d") && !text.contains("0, 1, 2, 3"), "\(text)")
            #expect(text.count < 80, "\(text)")
        }
    }

    // MARK: Vectors (docs/pairing.md, section 9)

    static let vectorSkJ = bytes(hex: "0101010101010101010101010101010101010101010101010101010101010101")
    static let vectorNj = bytes(hex: "11111111111111111111111111111111")
    static let vectorSkO = bytes(hex: "0202020202020202020202020202020202020202020202020202020202020202")
    static let vectorNo = bytes(hex: "22222222222222222222222222222222")
    static let vectorAEADNonce = bytes(hex: "333333333333333333333333")

    @Test func vectorsMatchTheDocument() throws {
        var joiner = PairingJoiner(advertisement: Self.advertisement, privateKey: Self.vectorSkJ, nonce: Self.vectorNj)
        var offerer = PairingOfferer(
            advertisement: Self.advertisement, account: Fixture.accountA, privateKey: Self.vectorSkO,
            nonce: Self.vectorNo)
        let start = joiner.start
        let commit = try offerer.receiveStart(start)
        let nonceJ = try joiner.receiveCommit(commit)
        let (nonceO, number) = try offerer.receiveNonce(nonceJ)
        #expect(try joiner.receiveNonce(nonceO) == number)
        let confirm = try joiner.confirm()
        var fixed = FixedGenerator(bytes: Self.vectorAEADNonce)
        _ = try offerer.userConfirmed(using: &fixed)
        fixed = FixedGenerator(bytes: Self.vectorAEADNonce)
        let account = try #require(try offerer.receiveConfirm(confirm, using: &fixed))
        let (_, done) = try joiner.receiveAccount(account)
        let out = [
            "start": Self.hex(start), "commit": Self.hex(commit), "nonceJ": Self.hex(nonceJ),
            "nonceO": Self.hex(nonceO), "number": number.description, "confirm": Self.hex(confirm),
            "account": Self.hex(account), "done": Self.hex(done),
        ]
        #expect(out == Self.expected)
    }

    /// From the independent reference, Tests/HandoffCoreTests/Vectors/generate_pairing_vectors.py.
    static let expected: [String: String] = [
        "start": "1001a0a1a2a3a4a5a6a7a4e09292b651c278b9772c569f5fa9bb13d906b46ab68c9df9dc2b4409f8a209",
        "commit": "1002ce8d3ad1ccb633ec7b70c17814a5c76ecd029685050d344745ba05870e587d59"
            + "be1573d5b251118583fcbfaa3a0f3901bccf05bef50beeead5722298e79d6207",
        "nonceJ": "100311111111111111111111111111111111",
        "nonceO": "100422222222222222222222222222222222",
        "number": "189214",
        "confirm": "1005f11673a46f6fd890f840ef8e91b3af474577a8da7a72485a60ca4b4e3f803adf",
        "account": "1006333333333333333333333333bf7e3241c13a738ae410f9d75efa91d208f95d8557401101a2b2687d60bf5e1c45d7"
            + "bee6394bf930e9562f9b88cf8548a1eff95c98832cc5dd",
        "done": "1007e02d2a59f6038f195072609515b09918a67547e22542994aee6ebdff554a1e87",
    ]
}

/// Hands out the given bytes, one per `next()` as the low byte of the word (the vector's AEAD nonce
/// repeats one byte, so it does not depend on how many words a draw takes).
struct FixedGenerator: RandomNumberGenerator {
    var bytes: [UInt8]
    var index = 0
    init(bytes: [UInt8]) { self.bytes = bytes }
    mutating func next() -> UInt64 {
        defer { index += 1 }
        return UInt64(bytes[index % bytes.count])
    }
}

extension PairingOfferer {
    /// `receiveStart` on a copy, for tests that only need the commit.
    func receiveStartCopy(_ start: [UInt8]) throws(PairingError) -> [UInt8] {
        var copy = self
        return try copy.receiveStart(start)
    }
}
