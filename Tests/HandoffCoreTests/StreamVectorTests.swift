import Testing

@testable import HandoffCore

/// HandoffCore against the independent reference of docs/continuation.md, section 10
/// (Vectors/generate_stream_vectors.py, which writes Vectors/stream-v1.json).
@Suite struct StreamVectorTests {
    struct File: Decodable, Sendable {
        struct Keys: Decodable, Sendable {
            let name: String
            let accountSecret: String
            let epochLength: UInt32
            let epochIndex: UInt64
            let epochContext: String
            let tag: String
            let requestNonce: String
            let psm: UInt16
            let streamSecret: String
            let offer: String
            let streamKey: String
            let continuingToOrigin: String
            let originToContinuing: String

            var epoch: Epoch { Epoch(index: epochIndex, length: epochLength) }
            var account: AccountKey { try! AccountKey(name: "vector", secret: bytes(hex: accountSecret)) }
            var streamOffer: StreamOffer { try! StreamOffer(psm: psm, secret: bytes(hex: streamSecret)) }
            var keys: StreamKeys {
                StreamKeys(
                    account: account, epoch: epoch, tag: bytes(hex: tag), requestNonce: bytes(hex: requestNonce),
                    offer: streamOffer)
            }
        }

        struct Frame: Decodable, Sendable {
            let direction: String
            let counter: UInt64
            let type: String
            let body: String
            let nonce: String
            let frame: String
        }

        struct Transcript: Decodable, Sendable {
            let keys: Int
            let frames: [Frame]
        }

        struct Offer: Decodable, Sendable {
            let name: String
            let bytes: String
            let result: String
        }

        let maximumFrameLength: Int
        let maximumDataLength: Int
        let keys: [Keys]
        let transcripts: [Transcript]
        let offers: [Offer]
    }

    static let file: File = decodeVectors("stream-v1")

    static func hex(_ key: StreamDirectionKey) -> String { key.withUnsafeBytes { Hex.encode($0) } }

    @Test func theSizesAreTheDocuments() {
        #expect(StreamFormat.maximumFrameLength == Self.file.maximumFrameLength)
        #expect(StreamFormat.maximumDataLength == Self.file.maximumDataLength)
    }

    @Test func keysAndOffersMatchTheVectors() {
        #expect(Self.file.keys.count == 3)
        for vector in Self.file.keys {
            #expect(Hex.encode(vector.epoch.context.bytes) == vector.epochContext, "\(vector.name)")
            #expect(Hex.encode(vector.streamOffer.encoded()) == vector.offer, "\(vector.name)")
            #expect(vector.account.schedule.streamKey.withUnsafeBytes { Hex.encode($0) } == vector.streamKey, "\(vector.name)")
            let keys = vector.keys
            #expect(Self.hex(keys.continuingToOrigin) == vector.continuingToOrigin, "\(vector.name)")
            #expect(Self.hex(keys.originToContinuing) == vector.originToContinuing, "\(vector.name)")
        }
    }

    @Test func sealingReproducesEveryFrameAndOpeningGivesItsContent() throws {
        #expect(Self.file.transcripts.count == 2)
        for transcript in Self.file.transcripts {
            let keys = Self.file.keys[transcript.keys].keys
            for role in StreamRole.allCases {
                let direction = role.outgoing == .continuingToOrigin ? "continuingToOrigin" : "originToContinuing"
                let frames = transcript.frames.filter { $0.direction == direction }
                #expect(!frames.isEmpty)
                var sealer = keys.sealer(for: role)
                var opener = keys.opener(for: role == .origin ? .continuing : .origin)
                for (index, vector) in frames.enumerated() {
                    #expect(vector.counter == UInt64(index))
                    let nonce = StreamDirectionKey.nonce(counter: vector.counter).withUnsafeBytes { Hex.encode($0) }
                    #expect(nonce == vector.nonce)
                    let body = bytes(hex: vector.body)
                    let sealed: [UInt8]
                    switch vector.type {
                    case "hello": sealed = try sealer.hello()
                    case "data": sealed = try sealer.seal(body)
                    case "end": sealed = try sealer.end()
                    case "abort": sealed = try sealer.abort(StreamAbortReason(code: body[0]))
                    default: Issue.record("unknown frame type \(vector.type)"); continue
                    }
                    #expect(Hex.encode(sealed) == vector.frame, "\(direction) frame \(index)")
                    opener.append(bytes(hex: vector.frame))
                    switch vector.type {
                    case "hello": #expect(try opener.next() == .hello)
                    case "data": #expect(try opener.next() == .data(body))
                    case "end": #expect(try opener.next() == .end)
                    default: #expect(throws: StreamError.peerAborted(StreamAbortReason(code: body[0]))) { try opener.next() }
                    }
                }
            }
        }
    }

    @Test func offerDecodingGivesTheVectorsOutcomes() {
        #expect(Self.file.offers.count >= 8)
        for vector in Self.file.offers {
            let outcome: String
            do throws(StreamOfferError) {
                outcome = "psm 0x" + Hex.encode(try StreamOffer(decoding: bytes(hex: vector.bytes)).psm, width: 4)
            } catch {
                switch error {
                case .wrongLength(let count): outcome = "wrongLength \(count)"
                case .unsupportedVersion(let version): outcome = "unsupportedVersion \(version)"
                case .psmOutOfRange(let psm): outcome = "psmOutOfRange \(psm)"
                case .wrongSecretLength(let count): outcome = "wrongSecretLength \(count)"
                }
            }
            #expect(outcome == vector.result, "\(vector.name)")
        }
    }
}
