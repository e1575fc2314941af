/// Constants of the continuation exchange (docs/continuation.md).
public enum ContinuationFormat {
    /// The first byte of every continuation request and response: version 1 in the
    /// high nibble, kind 0 (continue) in the low one.
    public static let versionByte: UInt8 = 0x10
    /// The first byte of an introduction's request and response: version 1, kind 1
    /// (docs/continuation.md, section 9).
    public static let introductionByte: UInt8 = 0x11
    /// The first byte of a rekey's request and response: version 1, kind 2
    /// (docs/continuation.md, section 11).
    public static let rekeyByte: UInt8 = 0x12
    /// The first byte of a continuation whose requester takes streams: version 1, kind 3
    /// (docs/continuation.md, sections 4 and 10.2). Its request and response are a continuation's,
    /// under labels of their own; only its response's payload may carry a stream offer.
    public static let streamsByte: UInt8 = 0x13
    /// The GATT primary service "handoff continuation".
    public static let serviceUUID = "7a955467-538c-4b86-9aa8-9ef63d05d0a7"
    /// The request characteristic (`write`).
    public static let requestCharacteristicUUID = "608ea25e-3522-42f7-9392-b9b48ba74640"
    /// The response characteristic (`notify`).
    public static let responseCharacteristicUUID = "7c80da75-0528-4541-8313-16de298e09aa"
    /// Length of a version 1 request: version, tag, nonce, sealed plaintext, Poly1305 tag.
    public static let requestLength = 1 + 4 + 12 + 26 + 16
    /// Length of the random request nonce.
    public static let requestNonceLength = 16
    /// The largest response, all chunks together.
    public static let maximumResponseLength = 8192
    /// Bytes of chunk header: session, index, count.
    public static let chunkHeaderLength = 8
    /// The LE minimum ATT MTU, used when bluetoothd reports none.
    public static let minimumMTU = 23
    /// The largest attribute value.
    public static let maximumAttributeLength = 512
    /// Request nonces remembered against replay.
    public static let rememberedRequests = 4096

    /// Length of an introduction request: a continuation request's, plus the requester's
    /// card padded to its longest (section 9).
    public static let introductionRequestLength = requestLength + DeviceCard.maximumEncodedLength

    /// Length of a rekey request: a continuation request's, plus the requester's fingerprint
    /// and a rekey envelope (193 bytes; docs/continuation.md, section 11).
    public static let rekeyRequestLength = requestLength + DeviceCard.fingerprintLength + RekeyFormat.envelopeLength
    /// Length of a rekey's `ok` response: kind, status, nonce, sealed acknowledgement, Poly1305 tag (62 bytes).
    public static let rekeyResponseLength = 2 + 12 + RekeyFormat.acknowledgementLength + 16

    static let requestLabel = Array("handoff v1 continue request".utf8)
    static let responseLabel = Array("handoff v1 continue response".utf8)
    static let introductionRequestLabel = Array("handoff v1 introduce request".utf8)
    static let introductionResponseLabel = Array("handoff v1 introduce response".utf8)
    static let rekeyRequestLabel = Array("handoff v1 rekey request".utf8)
    static let rekeyResponseLabel = Array("handoff v1 rekey response".utf8)
    static let streamsRequestLabel = Array("handoff v1 continue with streams request".utf8)
    static let streamsResponseLabel = Array("handoff v1 continue with streams response".utf8)

    /// The request label of an exchange kind (the first byte).
    static func requestLabel(kind: UInt8) -> [UInt8] {
        switch kind {
        case introductionByte: introductionRequestLabel
        case rekeyByte: rekeyRequestLabel
        case streamsByte: streamsRequestLabel
        default: requestLabel
        }
    }

    /// The response label of an exchange kind (the first byte).
    static func responseLabel(kind: UInt8) -> [UInt8] {
        switch kind {
        case introductionByte: introductionResponseLabel
        case rekeyByte: rekeyResponseLabel
        case streamsByte: streamsResponseLabel
        default: responseLabel
        }
    }
}
