import Testing

@testable import HandoffCore

/// The continuation that carries a stream offer (docs/continuation.md, sections 4, 5 and 10.2): the request
/// kind 0x13 says the requester takes streams, and only its response's payload may carry an offer (flag bit 4).
/// The vectors come from the independent reference (Vectors/generate_stream_vectors.py, `exchanges`).
@Suite struct ContinuationStreamsTests {
    struct File: Decodable, Sendable {
        struct Exchange: Decodable, Sendable {
            let name: String
            let accountSecret: String
            let epochLength: UInt32
            let epochIndex: UInt64
            let slot: UInt8
            let sequence: UInt16
            let originDevice, requesterDevice, requestNonce, requestAEADNonce, responseNonce: String
            let tag, request, type, title, payload, response: String
            let offer: String?
            let continuingToOrigin, originToContinuing: String?
        }

        let exchanges: [Exchange]
    }

    static let exchanges: [File.Exchange] = (decodeVectors("stream-v1") as File).exchanges

    static func hex(_ key: StreamDirectionKey) -> String { key.withUnsafeBytes { Hex.encode($0) } }

    @Test func theVectorsHaveAnExchangeWithAndOneWithoutAnOffer() {
        #expect(Self.exchanges.map { $0.offer != nil } == [true, false])
    }

    @Test("Request, payload, response and stream keys match the reference byte for byte", arguments: exchanges)
    func exchange(vector: File.Exchange) throws {
        let account = try AccountKey(name: "vector", secret: bytes(hex: vector.accountSecret))
        let epoch = Epoch(index: vector.epochIndex, length: vector.epochLength)
        let type = try ActivityType(vector.type)
        let fields = BeaconFields(
            headerNibble: 0, epoch: epoch, slot: vector.slot, salt: 0x123456, typeHash: type.hash(for: account),
            flags: [.hasPayload, .supportsStreams, .reachable], sequence: vector.sequence,
            device: DeviceID(rawValue: UInt32(vector.originDevice, radix: 16)!))
        let beaconPayload = BeaconCodec.seal(fields, account: account)
        #expect(Hex.encode(beaconPayload[1..<5]) == vector.tag)
        let now = Fixture.seconds(in: epoch)
        let configuration = BeaconConfiguration(epochLength: vector.epochLength)
        var recognizer = BeaconRecognizer(configuration: configuration, accounts: [account])
        let beacon = try recognizer.recognize(beaconPayload, now: now)

        var draws = FixedGenerator(bytes: bytes(hex: vector.requestNonce) + bytes(hex: vector.requestAEADNonce))
        let pending = PendingContinuation(
            beacon: beacon, tag: beacon.tagBytes, account: account,
            requester: DeviceID(rawValue: UInt32(vector.requesterDevice, radix: 16)!), takesStreams: true, using: &draws)
        #expect(pending.takesStreams)
        #expect(Hex.encode(pending.request) == vector.request)

        var server = ContinuationServer(configuration: configuration)
        server.didAdvertise(beaconPayload, account: account, activity: "a", now: now)
        let accepted = try server.accept(bytes(hex: vector.request), now: now)
        #expect(accepted.takesStreams)
        let offer = try vector.offer.map { try StreamOffer(decoding: bytes(hex: $0)) }
        let payload = try ActivityPayload(type: type, title: vector.title, streamOffer: offer)
        #expect(Hex.encode(payload.encoded()) == vector.payload)
        var responseDraws = FixedGenerator(bytes: bytes(hex: vector.responseNonce))
        let response = server.respond(to: accepted, with: payload, using: &responseDraws)
        #expect(Hex.encode(response) == vector.response)

        let opened = try pending.open(response: bytes(hex: vector.response))
        #expect(opened == payload)
        #expect(opened.streamOffer == offer)
        if let offer {
            for keys in [pending.streamKeys(for: offer), accepted.streamKeys(for: offer)] {
                #expect(Self.hex(keys.continuingToOrigin) == vector.continuingToOrigin)
                #expect(Self.hex(keys.originToContinuing) == vector.originToContinuing)
            }
        }
    }

    /// A device that predates streams, or a request that did not take them, refuses a payload with an offer:
    /// bit 4 is a reserved flag there.
    @Test func anOfferIsAReservedFlagUnlessTheRequestTookStreams() throws {
        let vector = try #require(Self.exchanges.first { $0.offer != nil })
        let payload = bytes(hex: vector.payload)
        #expect(throws: ActivityPayloadError.reservedFlags(0x11)) { try ActivityPayload(decoding: payload) }
        #expect(try ActivityPayload(decoding: payload, allowingStreamOffer: true).streamOffer != nil)
        var badOffer = payload
        badOffer[badOffer.count - 19] = 2
        #expect(throws: ActivityPayloadError.invalidStreamOffer(.unsupportedVersion(2))) {
            try ActivityPayload(decoding: badOffer, allowingStreamOffer: true)
        }
        #expect(throws: ActivityPayloadError.truncated) {
            try ActivityPayload(decoding: payload.dropLast(), allowingStreamOffer: true)
        }
    }

    /// The kind is bound by the labels: a request of one kind relabelled as the other does not open, so a
    /// device on the link can neither strip nor add "takes streams"; and each side keeps to its own kind.
    @Test func theKindIsAuthenticatedAndEachResponseAnswersItsOwnKind() throws {
        var exchange = try ContinuationTests.Exchange()
        let streams = PendingContinuation(
            beacon: exchange.beacon, tag: exchange.tag, account: Fixture.accountA, requester: DeviceID(rawValue: 9),
            takesStreams: true, using: &exchange.generator)
        let plain = exchange.pending()
        #expect(streams.request[0] == 0x13 && plain.request[0] == 0x10)
        #expect(exchange.status([0x10] + streams.request.dropFirst()) == .authenticationFailed)
        #expect(exchange.status([0x13] + plain.request.dropFirst()) == .authenticationFailed)

        let acceptedPlain = try exchange.server.accept(plain.request, now: Fixture.now)
        #expect(!acceptedPlain.takesStreams)
        let plainResponse = exchange.server.respond(to: acceptedPlain, with: ContinuationTests.payload, using: &exchange.generator)
        #expect(plainResponse[0] == 0x10)
        #expect(try plain.open(response: plainResponse) == ContinuationTests.payload)

        let acceptedStreams = try exchange.server.accept(streams.request, now: Fixture.now)
        var withOffer = ContinuationTests.payload
        withOffer.streamOffer = try StreamOffer(psm: 0x0091, using: &exchange.generator)
        let streamsResponse = exchange.server.respond(to: acceptedStreams, with: withOffer, using: &exchange.generator)
        #expect(streamsResponse[0] == 0x13)
        #expect(try streams.open(response: streamsResponse) == withOffer)
        // A plain request's pending state refuses a response of the other kind, and vice versa.
        #expect(ContinuationTests.failure { () throws(ExchangeError) in try plain.open(response: streamsResponse) } == .malformedResponse("version byte 0x13"))
        #expect(ContinuationTests.failure { () throws(ExchangeError) in try streams.open(response: plainResponse) } == .malformedResponse("version byte 0x10"))
    }
}
