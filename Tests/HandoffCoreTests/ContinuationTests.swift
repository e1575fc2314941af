import PropertyBased
import Testing

@testable import HandoffCore

/// The continuation exchange of docs/continuation.md: origin (A) and continuing device (B).
@Suite struct ContinuationTests {
    /// A advertises one beacon for activity "a1"; B recognises it. Returns both sides' state.
    struct Exchange {
        var server = ContinuationServer(configuration: .default)
        var generator = SeededGenerator(seed: 7)
        let beaconPayload: [UInt8]
        let beacon: RecognizedBeacon

        init(now: Double = Fixture.now) throws {
            var encoder = BeaconEncoder()
            beaconPayload = encoder.encode(
                account: Fixture.accountA, activityType: Fixture.browse, flags: [.hasPayload], now: now,
                using: &generator)
            server.didAdvertise(beaconPayload, account: Fixture.accountA, activity: "a1", now: now)
            var recognizer = BeaconRecognizer(accounts: [Fixture.accountA])
            recognizer.declareActivityTypes([Fixture.browse])
            beacon = try recognizer.recognize(beaconPayload, now: now)
        }

        var tag: [UInt8] { Array(beaconPayload[1..<5]) }

        mutating func pending(account: AccountKey = Fixture.accountA, tag: [UInt8]? = nil) -> PendingContinuation {
            PendingContinuation(
                beacon: beacon, tag: tag ?? self.tag, account: account, requester: DeviceID(rawValue: 0x0b0b_0b0b),
                using: &generator)
        }

        mutating func status(_ request: [UInt8], now: Double = Fixture.now) -> ExchangeStatus {
            do throws(ExchangeStatus) {
                _ = try server.accept(request, now: now)
                return .ok
            } catch {
                return error
            }
        }
    }

    static let payload = try! ActivityPayload(
        type: Fixture.browse, title: "Release notes", userInfo: Array(#"{"scroll":0.25,"tab":3}"#.utf8),
        webpageURL: "https://example.org/notes", requiredUserInfoKeys: ["tab"])

    static func failure(_ body: () throws(ExchangeError) -> ActivityPayload) -> ExchangeError? {
        do throws(ExchangeError) {
            _ = try body()
            return nil
        } catch {
            return error
        }
    }

    /// A recognised beacon carries its recognition tag, so a request can be built from it alone.
    @Test func aRecognisedBeaconCarriesTheTagItsPayloadHad() throws {
        var exchange = try Exchange()
        #expect(exchange.beacon.tagBytes == exchange.tag)
        let fromBeacon = PendingContinuation(beacon: exchange.beacon, account: Fixture.accountA, requester: DeviceID(rawValue: 2))
        #expect(exchange.status(fromBeacon.request) == .ok)
    }

    @Test func aRequestIsAnsweredWithTheExactPayloadAndNamesBothDevices() throws {
        var exchange = try Exchange()
        let pending = exchange.pending()
        #expect(pending.request.count == ContinuationFormat.requestLength)
        let accepted = try exchange.server.accept(pending.request, now: Fixture.now)
        #expect(accepted.activity == "a1")
        #expect(accepted.account == Fixture.accountA.id)
        #expect(accepted.requester == DeviceID(rawValue: 0x0b0b_0b0b))
        #expect(accepted.session == pending.session)
        let response = exchange.server.respond(to: accepted, with: Self.payload, using: &exchange.generator)
        #expect(try pending.open(response: response) == Self.payload)
    }

    @Test func requestsThatAreMalformedOrNameNoAdvertisedBeaconAreRefused() throws {
        var exchange = try Exchange()
        let good = exchange.pending().request
        #expect(exchange.status(Array(good.dropLast())) == .malformed)
        #expect(exchange.status(good + [0]) == .malformed)
        #expect(exchange.status([0x20] + good.dropFirst()) == .malformed)
        #expect(exchange.status([]) == .malformed)
        // A tag the origin never advertised.
        #expect(exchange.status(exchange.pending(tag: [1, 2, 3, 4]).request) == .unknownBeacon)
        // A beacon of the right tag but another sequence number (B made it up).
        var forged = try Exchange()
        let other = RecognizedBeacon(
            account: forged.beacon.account, accountName: forged.beacon.accountName,
            fields: BeaconFields(
                headerNibble: 0, epoch: forged.beacon.epoch, slot: forged.beacon.fields.slot, salt: 0,
                typeHash: forged.beacon.typeHash, flags: [], sequence: forged.beacon.sequence &+ 9,
                device: forged.beacon.device),
            activityType: forged.beacon.activityType, tag: forged.beacon.tag)
        let request = PendingContinuation(
            beacon: other, tag: forged.tag, account: Fixture.accountA, requester: DeviceID(rawValue: 1),
            using: &forged.generator
        ).request
        #expect(forged.status(request) == .unknownBeacon)
    }

    @Test func aStrangerOrATamperedRequestFailsAuthentication() throws {
        var exchange = try Exchange()
        // Another account's key, with the tag copied from the air.
        #expect(exchange.status(exchange.pending(account: Fixture.accountB).request) == .authenticationFailed)
        // Any flipped bit after the tag.
        let good = exchange.pending().request
        for index in 5..<good.count {
            var tampered = good
            tampered[index] ^= 0x01
            #expect(exchange.status(tampered) == .authenticationFailed, "byte \(index)")
        }
    }

    @Test func aReplayedRequestIsRefusedAndTheWindowEndsWithThePreviousEpoch() throws {
        var exchange = try Exchange()
        let request = exchange.pending().request
        #expect(exchange.status(request) == .ok)
        #expect(exchange.status(request) == .replayed)
        // One epoch later the beacon is still in the window; two epochs later it is gone.
        let fresh = exchange.pending().request
        #expect(exchange.status(fresh, now: Fixture.now + 600) == .ok)
        #expect(exchange.status(exchange.pending().request, now: Fixture.now + 1200) == .unknownBeacon)
    }

    @Test func aResponseOpensOnlyForItsOwnRequest() throws {
        var exchange = try Exchange()
        let first = exchange.pending()
        let second = exchange.pending()
        let accepted = try exchange.server.accept(first.request, now: Fixture.now)
        let response = exchange.server.respond(to: accepted, with: Self.payload, using: &exchange.generator)
        #expect(Self.failure { () throws(ExchangeError) in try second.open(response: response) } == .authenticationFailed)
        for index in 2..<response.count {
            var tampered = response
            tampered[index] ^= 0x80
            #expect(Self.failure { () throws(ExchangeError) in try first.open(response: tampered) } == .authenticationFailed)
        }
    }

    @Test func refusalsAndMalformedResponsesAreReportedAsSuch() throws {
        var exchange = try Exchange()
        let pending = exchange.pending()
        for status in ExchangeStatus.allCases where status != .ok {
            #expect(Self.failure { () throws(ExchangeError) in
                try pending.open(response: ContinuationServer.refusal(status))
            } == .refused(status))
        }
        #expect(Self.failure { () throws(ExchangeError) in try pending.open(response: []) } == .malformedResponse("0 bytes"))
        #expect(Self.failure { () throws(ExchangeError) in try pending.open(response: [0x10, 99]) } == .malformedResponse("unknown status 99"))
        #expect(Self.failure { () throws(ExchangeError) in try pending.open(response: [0x20, 0]) } == .malformedResponse("version byte 0x20"))
        #expect(Self.failure { () throws(ExchangeError) in try pending.open(response: [0x10, 0, 1, 2]) } == .malformedResponse("4 bytes"))
    }

    @Test func thePayloadRoundTripsAndEveryLimitHolds() throws {
        #expect(try ActivityPayload(decoding: Self.payload.encoded()) == Self.payload)
        let bare = try ActivityPayload(type: Fixture.edit)
        #expect(bare.encoded() == [1, 0, UInt8(Fixture.edit.rawValue.utf8.count)] + Array(Fixture.edit.rawValue.utf8))
        #expect(try ActivityPayload(decoding: bare.encoded()) == bare)
        #expect(throws: ActivityPayloadError.tooLong(field: "title", length: 257, limit: 256)) {
            try ActivityPayload(type: Fixture.edit, title: String(repeating: "x", count: 257))
        }
        #expect(throws: ActivityPayloadError.tooLong(field: "userInfo", length: 3073, limit: 3072)) {
            try ActivityPayload(type: Fixture.edit, userInfo: [UInt8](repeating: 0x20, count: 3073))
        }
        #expect(throws: ActivityPayloadError.badURLScheme) {
            try ActivityPayload(type: Fixture.edit, webpageURL: "file:///etc/passwd")
        }
        // The largest activity fits one response.
        let largest = try ActivityPayload(
            type: try ActivityType(["a", "b", "c", "d"].map { String(repeating: $0, count: 63) }.joined(separator: ".")),
            title: String(repeating: "t", count: 256), userInfo: [UInt8](repeating: 0x20, count: 3072),
            webpageURL: "https://" + String(repeating: "u", count: 2040), requiredUserInfoKeys: ["k"])
        #expect(largest.encoded().count + 2 + 12 + 16 <= ContinuationFormat.maximumResponseLength)
    }

    @Test func malformedPayloadsAreRejectedWithTheirReason() {
        let good = Self.payload.encoded()
        #expect(throws: ActivityPayloadError.unsupportedVersion(2)) { try ActivityPayload(decoding: [2] + good.dropFirst()) }
        #expect(throws: ActivityPayloadError.reservedFlags(0x1f)) { try ActivityPayload(decoding: [1, 0x1f] + good.dropFirst(2)) }
        #expect(throws: ActivityPayloadError.truncated) { try ActivityPayload(decoding: good.dropLast()) }
        #expect(throws: ActivityPayloadError.trailingBytes(1)) { try ActivityPayload(decoding: good + [0]) }
        var badUTF8 = good
        badUTF8[3 + Fixture.browse.rawValue.utf8.count + 2] = 0xff  // the first byte of the title
        #expect(throws: ActivityPayloadError.invalidUTF8(field: "title")) { try ActivityPayload(decoding: badUTF8) }
    }

    @Test func decodingArbitraryBytesNeverCrashes() async {
        await propertyCheck(count: 2000, input: Gen.uint8().array(of: 0...300)) { bytes in
            _ = try? ActivityPayload(decoding: bytes)
            _ = try? ActivityPayload(decoding: [1, 0x0f] + bytes)
        }
    }

    @Test(arguments: [23, 185, 517]) func chunksReassembleInAnyOrderAndStayWithinTheMTU(mtu: Int) throws {
        var exchange = try Exchange()
        let pending = exchange.pending()
        let accepted = try exchange.server.accept(pending.request, now: Fixture.now)
        let response = exchange.server.respond(to: accepted, with: Self.payload, using: &exchange.generator)
        var chunks = ResponseChunks.split(response, session: accepted.session, mtu: mtu)
        #expect(chunks.allSatisfy { $0.count <= min(mtu - 3, 512) })
        chunks.shuffle(using: &exchange.generator)
        var assembler = ChunkAssembler(session: pending.session)
        // Another exchange's notifications on the same characteristic are ignored.
        #expect(try assembler.add(ResponseChunks.split([1, 2, 3], session: ~pending.session, mtu: mtu)[0]) == nil)
        var whole: [UInt8]?
        for (index, chunk) in chunks.enumerated() {
            whole = try assembler.add(chunk)
            #expect((whole == nil) == (index < chunks.count - 1))
        }
        #expect(whole == response)
        #expect(try pending.open(response: try #require(whole)) == Self.payload)
    }

    @Test func chunksThatBreakTheRulesAreErrors() throws {
        let chunks = ResponseChunks.split([UInt8](repeating: 7, count: 100), session: 42, mtu: 23)
        #expect(chunks.count == 9)
        func error(_ steps: [[UInt8]]) -> ExchangeError? {
            var assembler = ChunkAssembler(session: 42)
            do throws(ExchangeError) {
                for chunk in steps { _ = try assembler.add(chunk) }
                return nil
            } catch {
                return error
            }
        }
        #expect(error([chunks[0], chunks[0]]) == .badChunk("chunk 0 twice"))
        var recounted = chunks[1]
        recounted[7] = 10
        #expect(error([chunks[0], recounted]) == .badChunk("count 10 after 9"))
        var outOfRange = chunks[1]
        outOfRange[5] = 9
        #expect(error([outOfRange]) == .badChunk("index 9 of 9"))
        #expect(error([[0, 0, 0]]) == .badChunk("3 bytes, shorter than the header"))
        // More than 8192 bytes in all is refused before it is stored.
        let huge = (0..<20).map { index in
            [0, 0, 0, 42, 0, UInt8(index), 0, 20] + [UInt8](repeating: 1, count: 504)
        }
        #expect(error(huge) == .badChunk("the response is over 8192 bytes"))
    }
}
