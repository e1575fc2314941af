import Testing

@testable import HandoffCore

/// The continuation streams of docs/continuation.md, section 10: keys, frames, handshake, failures.
@Suite struct StreamTests {
    static let tag: [UInt8] = [0xa1, 0xb2, 0xc3, 0xd4]
    static let requestNonce: [UInt8] = Array(0x10..<0x20)
    static let offer = try! StreamOffer(psm: 0x0080, secret: Array(0xc0..<0xd0))

    static func keys(
        account: AccountKey = Fixture.accountA, epoch: Epoch = Fixture.epoch, tag: [UInt8] = tag,
        requestNonce: [UInt8] = requestNonce, offer: StreamOffer = offer
    ) -> StreamKeys {
        StreamKeys(account: account, epoch: epoch, tag: tag, requestNonce: requestNonce, offer: offer)
    }

    /// The error `body` throws, or nil.
    static func failure(_ body: () throws(StreamError) -> Void) -> StreamError? {
        do throws(StreamError) {
            try body()
            return nil
        } catch {
            return error
        }
    }

    /// Everything one direction carries for `data`: hello, data frames, end; and each frame apart.
    static func wire(_ data: [UInt8], from role: StreamRole, keys: StreamKeys = keys()) throws -> (all: [UInt8], frames: [[UInt8]]) {
        var sealer = keys.sealer(for: role)
        var frames = [try sealer.hello()]
        for offset in stride(from: 0, to: data.count, by: StreamFormat.maximumDataLength) {
            frames.append(try sealer.seal(data[offset..<min(offset + StreamFormat.maximumDataLength, data.count)]))
        }
        frames.append(try sealer.end())
        return (frames.flatMap { $0 }, frames)
    }

    /// What an opener makes of `pieces`, fed in turn: the frames it gave, and the error it ended with
    /// (`finish` included).
    static func receive(
        _ pieces: [ArraySlice<UInt8>], by role: StreamRole, keys: StreamKeys = keys()
    ) -> (frames: [StreamFrame], error: StreamError?) {
        var opener = keys.opener(for: role)
        var frames: [StreamFrame] = []
        do throws(StreamError) {
            for piece in pieces {
                opener.append(piece)
                while let frame = try opener.next() { frames.append(frame) }
            }
            try opener.finish()
            return (frames, nil)
        } catch {
            return (frames, error)
        }
    }

    static func data(of frames: [StreamFrame]) -> [UInt8] {
        frames.flatMap { frame -> [UInt8] in
            if case .data(let bytes) = frame { return bytes }
            return []
        }
    }

    static func pattern(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    // MARK: Round trips and framing

    @Test(arguments: [0, 1, StreamFormat.maximumDataLength, StreamFormat.maximumDataLength + 1, 1 << 20])
    func bothDirectionsRoundTrip(count: Int) throws {
        let data = Self.pattern(count)
        let frameCount = (count + StreamFormat.maximumDataLength - 1) / StreamFormat.maximumDataLength
        for role in StreamRole.allCases {
            let (all, frames) = try Self.wire(data, from: role)
            let peer: StreamRole = role == .origin ? .continuing : .origin
            let (opened, error) = Self.receive([all[...]], by: peer)
            #expect(error == nil)
            #expect(opened.count == frameCount + 2)
            #expect(opened.first == .hello && opened.last == .end)
            let same = Self.data(of: opened) == data  // not in #expect: a failure would print a megabyte
            #expect(same, "\(role): the data differ")
            #expect(frames.first?.count == 19)
            #expect(frames.allSatisfy { $0.count <= StreamFormat.maximumFrameLength })
            if count >= StreamFormat.maximumDataLength {
                // A full frame is exactly the maximum on the wire.
                #expect(frames[1].count == StreamFormat.maximumFrameLength)
            }
        }
    }

    @Test func oneSealCallCutsLargeDataIntoFullFrames() throws {
        var sealer = Self.keys().sealer(for: .continuing)
        _ = try sealer.hello()
        let data = Self.pattern(3 * StreamFormat.maximumDataLength + 5)
        let sealed = try sealer.seal(data)
        #expect(sealed.count == data.count + 4 * (StreamFormat.maximumFrameLength - StreamFormat.maximumDataLength))
        #expect(sealer.counter == 5)
        #expect(try sealer.seal([]).isEmpty)
        #expect(sealer.counter == 5)
        var opener = Self.keys().opener(for: .origin)
        var hello = Self.keys().sealer(for: .continuing)
        opener.append(try hello.hello())
        opener.append(sealed)
        var frames: [StreamFrame] = []
        while let frame = try opener.next() { frames.append(frame) }
        #expect(frames.count == 5)
        let same = Self.data(of: frames) == data
        #expect(same)
    }

    @Test func bytesFedOneByOneOrInRandomPiecesGiveTheSameFrames() throws {
        let data = Self.pattern(2 * StreamFormat.maximumDataLength + 100)
        let (all, _) = try Self.wire(data, from: .continuing)
        let byteByByte = Self.receive(all.indices.map { all[$0...$0] }, by: .origin)
        #expect(byteByByte.error == nil)
        let same = Self.data(of: byteByByte.frames) == data
        #expect(same)
        var generator = SeededGenerator(seed: 16)
        for _ in 0..<200 {
            var pieces: [ArraySlice<UInt8>] = []
            var start = 0
            while start < all.count {
                let length = Int.random(in: 0...min(all.count - start, Bool.random(using: &generator) ? 40 : 5000),
                    using: &generator)
                pieces.append(all[start..<start + length])
                start += length
            }
            let result = Self.receive(pieces, by: .origin)
            #expect(result.error == nil)
            #expect(result.frames.count == 5)
            let sameInPieces = Self.data(of: result.frames) == data
            #expect(sameInPieces)
        }
    }

    @Test func theDecoderChecksALengthFieldAsSoonAsItHasBothBytes() throws {
        let fields: [([UInt8], Int)] = [([0x00, 0x10], 16), ([0x07, 0xff], 2047), ([0x00, 0x00], 0), ([0xff, 0xff], 65535)]
        for (bytes, length) in fields {
            var decoder = StreamFrameDecoder()
            decoder.append(bytes)
            #expect(throws: StreamError.frameLengthOutOfRange(length)) { try decoder.nextFrame() }
        }
        var decoder = StreamFrameDecoder()
        decoder.append([0x07])
        #expect(try decoder.nextFrame() == nil)
        decoder.append([0xfe] + [UInt8](repeating: 0, count: 2045))
        #expect(try decoder.nextFrame() == nil)
        decoder.append([0, 9])
        #expect(try decoder.nextFrame()?.count == 2048)
        #expect(decoder.bufferedByteCount == 1)
    }

    // MARK: Tampering, replay, loss, order

    @Test func aFlippedBitAnywhereEndsTheStreamAndItStaysFailed() throws {
        let data = Self.pattern(120)
        var sealer = Self.keys().sealer(for: .continuing)
        let frames = [try sealer.hello(), try sealer.seal(data[0..<40]), try sealer.seal(data[40..<80]),
            try sealer.seal(data[80...]), try sealer.end()]
        let all = frames.flatMap { $0 }
        var frameStart = 0
        for (frameIndex, frame) in frames.enumerated() {
            for byte in frameStart..<frameStart + frame.count {
                for bit in 0..<8 {
                    var tampered = all
                    tampered[byte] ^= 1 << bit
                    let (opened, error) = Self.receive([tampered[...]], by: .origin)
                    // Nothing of the tampered frame or after it gets through, and the failure says so.
                    #expect(opened.count <= frameIndex, "byte \(byte) bit \(bit)")
                    let prefix = Self.data(of: opened) == Array(data.prefix(40 * max(0, opened.count - 1)))
                    #expect(prefix, "byte \(byte) bit \(bit)")
                    guard let error else {
                        Issue.record("byte \(byte) bit \(bit): no failure")
                        continue
                    }
                    switch error {
                    case .handshakeFailed: #expect(frameIndex == 0)
                    case .authenticationFailed(let index): #expect(index == UInt64(frameIndex))
                    case .frameLengthOutOfRange, .truncated: #expect(byte - frameStart < 2)
                    default: Issue.record("byte \(byte) bit \(bit): \(error)")
                    }
                }
            }
            frameStart += frame.count
        }
        // After the failure, even genuine frames are refused with the same error.
        var opener = Self.keys().opener(for: .origin)
        var tampered = frames[1]
        tampered[5] ^= 0x20
        opener.append(frames[0])
        #expect(try opener.next() == .hello)
        opener.append(tampered)
        #expect(throws: StreamError.authenticationFailed(frame: 1)) { try opener.next() }
        opener.append(frames[1] + frames[2])
        #expect(throws: StreamError.authenticationFailed(frame: 1)) { try opener.next() }
        #expect(throws: StreamError.authenticationFailed(frame: 1)) { try opener.open(frames[2]) }
        #expect(throws: StreamError.authenticationFailed(frame: 1)) { try opener.finish() }
        #expect(!opener.isEstablished)
    }

    @Test func replayedDroppedReorderedAndForeignFramesFail() throws {
        var sealer = Self.keys().sealer(for: .continuing)
        let hello = try sealer.hello(), one = try sealer.seal([1]), two = try sealer.seal([2]), end = try sealer.end()
        var reverse = Self.keys().sealer(for: .origin)
        let otherHello = try reverse.hello(), otherOne = try reverse.seal([1])
        let cases: [(String, [[UInt8]], StreamError)] = [
            ("replayed", [hello, one, one, two, end], .authenticationFailed(frame: 2)),
            ("replayed hello", [hello, hello, one], .authenticationFailed(frame: 1)),
            ("dropped", [hello, two, end], .authenticationFailed(frame: 1)),
            ("dropped end", [hello, one, two], .truncated),
            ("reordered", [hello, two, one, end], .authenticationFailed(frame: 1)),
            ("end moved up", [hello, one, end, two], .authenticationFailed(frame: 2)),
            ("other direction's hello", [otherHello], .handshakeFailed),
            ("other direction's frame", [hello, otherOne], .authenticationFailed(frame: 1)),
            ("nothing", [], .truncated),
            ("half a hello", [Array(hello.prefix(10))], .truncated),
            ("bytes after the end", [hello, one, two, end, [0]], .unexpectedFrame("bytes after the end frame")),
            ("a frame after the end", [hello, one, two, end, one], .unexpectedFrame("bytes after the end frame")),
        ]
        for (name, frames, expected) in cases {
            let (_, error) = Self.receive(frames.map { $0[...] }, by: .origin)
            #expect(error == expected, "\(name)")
        }
        #expect(Self.receive([hello, one, two, end].map { $0[...] }, by: .origin).error == nil)
        // A byte after the end frame fails as soon as it comes, not only when the input ends.
        var short = Self.keys().sealer(for: .continuing)
        var opener = Self.keys().opener(for: .origin)
        opener.append(try short.hello() + short.end())
        #expect(try opener.next() == .hello)
        #expect(try opener.next() == .end)
        #expect(try opener.next() == nil)
        opener.append([0])
        #expect(throws: StreamError.unexpectedFrame("bytes after the end frame")) { try opener.next() }
    }

    /// What an opener makes of `units`, each an SDU (`receive(unit:)`): the data, the error (`finish`
    /// included), and how many frames it held.
    static func receive(units: [[UInt8]], by role: StreamRole = .origin) -> (data: [UInt8], error: StreamError?, held: Int) {
        var opener = keys().opener(for: role)
        var frames: [StreamFrame] = []
        do throws(StreamError) {
            for unit in units { frames += try opener.receive(unit: unit) }
            try opener.finish()
            return (data(of: frames), nil, opener.framesReordered)
        } catch {
            return (data(of: frames), error, opener.framesReordered)
        }
    }

    @Test func framesInSDUsOfTheirOwnMayComeOutOfOrderWithinTheWindow() throws {
        var sealer = Self.keys().sealer(for: .continuing)
        let hello = try sealer.hello()
        let data = try (1...40).map { try sealer.seal([UInt8($0)]) }  // frames 1…40
        let end = try sealer.end()  // frame 41
        let (one, two) = (data[0], data[1])
        var reverse = Self.keys().sealer(for: .origin)
        _ = try reverse.hello()
        let otherOne = try reverse.seal([1])
        let all = Array(1...40).map(UInt8.init)
        let cases: [(String, [[UInt8]], [UInt8], StreamError?, Int)] = [
            ("in order", [hello] + data + [end], all, nil, 0),
            ("swapped", [hello, two, one] + data.dropFirst(2) + [end], all, nil, 1),
            ("end moved up", [hello] + data.dropLast() + [end, data[39]], all, nil, 1),
            ("31 ahead", [hello, data[31]] + data.prefix(31) + data.suffix(8) + [end], all, nil, 1),
            ("32 ahead", [hello, data[32]] + data + [end], [], .authenticationFailed(frame: 1), 0),
            ("2…31 reversed", [hello, one] + data[1..<31].reversed() + data.suffix(9) + [end], all, nil, 29),
            ("replayed while held", [hello, two, two, one, end], [], .authenticationFailed(frame: 1), 1),
            ("replayed after delivery", [hello, one, one], [1], .authenticationFailed(frame: 2), 0),
            ("dropped, then 31 more", [hello] + data.dropFirst() + [end], [], .authenticationFailed(frame: 1), 31),
            ("dropped before the end", [hello] + data.dropLast() + [end], Array(all.dropLast()), .truncated, 1),
            ("other direction's frame", [hello, otherOne], [], .authenticationFailed(frame: 1), 0),
            ("hello not first", [one, hello], [], .handshakeFailed, 0),
            ("two frames in one SDU are bytes in order", [hello, two + one], [], .authenticationFailed(frame: 1), 0),
            ("a frame after the end", [hello] + data + [end, one], all, .unexpectedFrame("bytes after the end frame"), 0),
        ]
        for (name, units, expectedData, expectedError, expectedHeld) in cases {
            let result = Self.receive(units: units)
            #expect(result.data == expectedData, "\(name)")
            #expect(result.error == expectedError, "\(name)")
            #expect(result.held == expectedHeld, "\(name)")
        }
    }

    @Test func sealFramesFitsEachFrameIntoTheSendUnit() throws {
        let data = Self.pattern(5000)
        for limit in [20, 23, 100, 2048, 4096] {
            var sealer = Self.keys().sealer(for: .origin)
            let hello = try sealer.hello()
            let frames = try sealer.sealFrames(data, maximumFrameLength: limit)
            let longest = min(limit, StreamFormat.maximumFrameLength)
            #expect(frames.allSatisfy { $0.count <= longest }, "\(limit)")
            #expect(frames.count == (data.count + longest - 20) / (longest - 19), "\(limit)")
            let result = Self.receive(units: [hello] + frames + [try sealer.end()], by: .continuing)
            #expect(result.data == data && result.error == nil, "\(limit)")
        }
        var sealer = Self.keys().sealer(for: .origin)
        _ = try sealer.hello()
        var joined = Self.keys().sealer(for: .origin)
        _ = try joined.hello()
        #expect(try sealer.sealFrames(data).flatMap { $0 } == joined.seal(data))
    }

    @Test func aTruncatedStreamIsNotACleanEnd() throws {
        let (all, frames) = try Self.wire(Self.pattern(5000), from: .origin)
        let cut = Self.receive([all.dropLast(frames.last!.count)], by: .continuing)
        #expect(cut.error == .truncated)
        #expect(cut.frames.last != .end)
        #expect(Self.receive([all.dropLast()], by: .continuing).error == .truncated)
        #expect(Self.receive([all[...]], by: .continuing).error == nil)
        #expect(StreamError.truncated.description.contains("without its end frame"))
    }

    // MARK: Handshake

    @Test func theHandshakeFailsForAnotherAccountOfferOrExchange() throws {
        let genuine = Self.keys()
        let wrong: [(String, StreamKeys)] = [
            ("another account", Self.keys(account: Fixture.accountB)),
            ("another offer secret", Self.keys(offer: try StreamOffer(psm: 0x0080, secret: [UInt8](repeating: 0xc0, count: 16)))),
            ("another PSM", Self.keys(offer: try StreamOffer(psm: 0x0081, secret: Array(0xc0..<0xd0)))),
            ("another request nonce", Self.keys(requestNonce: [UInt8](repeating: 0, count: 16))),
            ("another tag", Self.keys(tag: [0, 0, 0, 0])),
            ("another epoch", Self.keys(epoch: Fixture.epoch.advanced(by: 1))),
        ]
        for (name, keys) in wrong {
            // A device that connects with other keys: the origin's opener refuses its first frame.
            let (intruder, _) = try Self.wire([1, 2, 3], from: .continuing, keys: keys)
            let atOrigin = Self.receive([intruder[...]], by: .origin, keys: genuine)
            #expect(atOrigin.error == .handshakeFailed, "\(name)")
            #expect(atOrigin.frames.isEmpty, "\(name)")
            // And the other way: an origin with other keys does not pass the continuing side's check.
            let (origin, _) = try Self.wire([], from: .origin, keys: keys)
            #expect(Self.receive([origin[...]], by: .continuing, keys: genuine).error == .handshakeFailed, "\(name)")
        }
        // The genuine handshake, both ways.
        var continuing = genuine.sealer(for: .continuing)
        var atOrigin = genuine.opener(for: .origin)
        atOrigin.append(try continuing.hello())
        #expect(!atOrigin.isEstablished)
        #expect(try atOrigin.next() == .hello)
        #expect(atOrigin.isEstablished)
        var origin = genuine.sealer(for: .origin)
        var atContinuing = genuine.opener(for: .continuing)
        atContinuing.append(try origin.hello())
        #expect(try atContinuing.next() == .hello)
    }

    @Test func theFirstFrameMustBeAHelloAndOnlyTheFirst() throws {
        let keys = Self.keys()
        let key = keys.continuingToOrigin
        let dataFirst = key.seal(.data, body: [1], counter: 0)
        #expect(Self.receive([dataFirst[...]], by: .origin).error == .unexpectedFrame("the first frame is not a hello"))
        let hello = key.seal(.hello, body: [], counter: 0)
        let cases: [(String, [UInt8], StreamError)] = [
            ("second hello", key.seal(.hello, body: [], counter: 1), .unexpectedFrame("a second hello")),
            ("empty data", key.seal(.data, body: [], counter: 1), .unexpectedFrame("data frame with a body of 0 bytes")),
            ("end with a body", key.seal(.end, body: [0], counter: 1), .unexpectedFrame("end frame with a body of 1 bytes")),
            ("abort without a reason", key.seal(.abort, body: [], counter: 1), .unexpectedFrame("abort frame with a body of 0 bytes")),
            ("unknown type", key.seal(plaintext: [0x09], counter: 1), .unexpectedFrame("frame type 0x09")),
        ]
        for (name, frame, expected) in cases {
            #expect(Self.receive([hello[...], frame[...]], by: .origin).error == expected, "\(name)")
        }
        #expect(Self.receive([key.seal(.hello, body: [0], counter: 0)[...]], by: .origin).error
            == .unexpectedFrame("the first frame is not a hello"))
    }

    // MARK: Ends and aborts

    @Test func anAbortEndsTheStreamWithThePeersReason() throws {
        for reason in [StreamAbortReason.authenticationFailed, .protocolViolation, .cancelled, .unknown(200)] {
            var sealer = Self.keys().sealer(for: .origin)
            let frames = [try sealer.hello(), try sealer.seal([7]), try sealer.abort(reason)]
            #expect(throws: StreamError.closed) { try sealer.seal([1]) }
            let (opened, error) = Self.receive([frames.flatMap { $0 }[...]], by: .continuing)
            #expect(opened == [.hello, .data([7])])
            #expect(error == .peerAborted(reason))
            #expect(StreamAbortReason(code: reason.code) == reason)
        }
        #expect(StreamError.authenticationFailed(frame: 3).abortReason == .authenticationFailed)
        #expect(StreamError.unexpectedFrame("x").abortReason == .protocolViolation)
        #expect(StreamError.frameLengthOutOfRange(5).abortReason == .protocolViolation)
        #expect(StreamError.truncated.abortReason == nil)
        #expect(StreamError.peerAborted(.cancelled).abortReason == nil)
    }

    @Test func theSealerKeepsItsOrder() throws {
        var sealer = Self.keys().sealer(for: .continuing)
        #expect(throws: StreamError.helloNotSent) { try sealer.seal([1]) }
        #expect(throws: StreamError.helloNotSent) { try sealer.end() }
        #expect(throws: StreamError.helloNotSent) { try sealer.abort(.cancelled) }
        _ = try sealer.hello()
        #expect(throws: StreamError.helloAlreadySent) { try sealer.hello() }
        _ = try sealer.end()
        #expect(sealer.isClosed)
        #expect(throws: StreamError.closed) { try sealer.seal([1]) }
        #expect(throws: StreamError.closed) { try sealer.end() }
        #expect(throws: StreamError.closed) { try sealer.abort(.cancelled) }
        #expect(throws: StreamError.closed) { try sealer.hello() }
        #expect(sealer.counter == 2)
    }

    @Test func theCounterNeverWrapsOnEitherSide() throws {
        let key = Self.keys().continuingToOrigin
        var sealer = StreamSealer(key: key, resumingAt: UInt64.max - 2)
        let last = try sealer.seal([1])
        // Two frames do not fit in what is left; none is sealed.
        #expect(throws: StreamError.counterExhausted) { try sealer.seal(Self.pattern(3000)) }
        #expect(sealer.counter == UInt64.max - 1)
        let end = try sealer.end()
        #expect(sealer.counter == UInt64.max)
        var full = StreamSealer(key: key, resumingAt: UInt64.max)
        #expect(throws: StreamError.counterExhausted) { try full.seal([1]) }
        #expect(throws: StreamError.counterExhausted) { try full.end() }
        #expect(throws: StreamError.counterExhausted) { try full.abort(.cancelled) }
        var opener = StreamOpener(key: key, resumingAt: UInt64.max - 2)
        #expect(try opener.open(last) == .data([1]))
        #expect(try opener.open(end) == .end)
        var exhausted = StreamOpener(key: key, resumingAt: UInt64.max)
        #expect(throws: StreamError.counterExhausted) { try exhausted.open(last) }
    }

    @Test func theNonceIsFourZeroBytesAndTheCounterBigEndian() {
        let nonce = StreamDirectionKey.nonce(counter: 0x0102_0304_0506_0708).withUnsafeBytes { Array($0) }
        #expect(nonce == [0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8])
    }

    // MARK: Keys and offers

    @Test func theTwoDirectionsHaveDifferentKeysAndEveryInputChangesThem() throws {
        func bytes(_ key: StreamDirectionKey) -> [UInt8] { key.withUnsafeBytes { Array($0) } }
        let genuine = Self.keys()
        #expect(bytes(genuine.continuingToOrigin) != bytes(genuine.originToContinuing))
        #expect(bytes(Self.keys().continuingToOrigin) == bytes(genuine.continuingToOrigin))
        let others = [
            Self.keys(account: Fixture.accountB), Self.keys(requestNonce: [UInt8](repeating: 1, count: 16)),
            Self.keys(tag: [1, 2, 3, 4]), Self.keys(epoch: Fixture.epoch.advanced(by: -1)),
            Self.keys(offer: try StreamOffer(psm: 0x00ff, secret: Array(0xc0..<0xd0))),
        ]
        for other in others {
            #expect(bytes(other.continuingToOrigin) != bytes(genuine.continuingToOrigin))
            #expect(bytes(other.originToContinuing) != bytes(genuine.originToContinuing))
        }
        // K_stream is not K_payload.
        let stream = Fixture.accountA.schedule.streamKey.withUnsafeBytes { Array($0) }
        #expect(stream != Fixture.accountA.schedule.payloadKey.withUnsafeBytes { Array($0) })
    }

    @Test func keysAndOffersNeverShowTheirBytes() throws {
        let keys = Self.keys()
        let secrets = [keys.continuingToOrigin, keys.originToContinuing].map { $0.withUnsafeBytes { Hex.encode($0) } }
            + [Hex.encode(Array(0xc0..<0xd0) as [UInt8])]
        func dumped(_ value: Any) -> String {
            var text = ""
            dump(value, to: &text)
            return text
        }
        let renderings = [
            keys.description, keys.debugDescription, "\(keys)", String(reflecting: keys), dumped(keys),
            keys.continuingToOrigin.description, String(reflecting: keys.originToContinuing),
            dumped(keys.originToContinuing), Self.offer.description, String(reflecting: Self.offer), dumped(Self.offer),
            "\(keys.sealer(for: .origin))", dumped(keys.sealer(for: .origin)), dumped(keys.opener(for: .origin)),
        ]
        for text in renderings {
            for secret in secrets {
                #expect(!text.lowercased().contains(secret.prefix(8)), "\(text)")
                #expect(!text.lowercased().contains(secret.suffix(8)), "\(text)")
            }
        }
        #expect(Self.offer.description == "StreamOffer(psm: 0x0080)")
        #expect(keys.continuingToOrigin.description == "StreamDirectionKey(continuing to origin)")
    }

    @Test func offersRoundTripAndBadOnesAreRefusedWithTheirReason() throws {
        let encoded = Self.offer.encoded()
        #expect(encoded == [1, 0x00, 0x80] + Array(0xc0..<0xd0))
        #expect(try StreamOffer(decoding: encoded) == Self.offer)
        #expect(try StreamOffer(decoding: encoded) != StreamOffer(psm: 0x0080, secret: [UInt8](repeating: 0, count: 16)))
        #expect(throws: StreamOfferError.wrongLength(18)) { try StreamOffer(decoding: encoded.dropLast()) }
        #expect(throws: StreamOfferError.unsupportedVersion(2)) { try StreamOffer(decoding: [2] + encoded.dropFirst()) }
        #expect(throws: StreamOfferError.psmOutOfRange(0x0100)) { try StreamOffer(decoding: [1, 1, 0] + encoded.dropFirst(3)) }
        #expect(throws: StreamOfferError.psmOutOfRange(0x007f)) { try StreamOffer(psm: 0x007f) }
        #expect(throws: StreamOfferError.wrongSecretLength(15)) { try StreamOffer(psm: 0x0080, secret: [UInt8](repeating: 0, count: 15)) }
        var generator = SeededGenerator(seed: 3)
        let first = try StreamOffer(psm: 0x00c0, using: &generator)
        let second = try StreamOffer(psm: 0x00c0, using: &generator)
        #expect(first != second)
        #expect(first.encoded().count == StreamFormat.offerLength)
        #expect(try StreamOffer(psm: 0x00ff) != StreamOffer(psm: 0x00ff))
        #expect(StreamOfferError.psmOutOfRange(0x0100).description.contains("0x0100"))
    }
}
