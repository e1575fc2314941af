import Crypto

/// The two direction keys of one continuation stream (docs/continuation.md, section 10.3):
///
/// ```
/// salt = requestNonce(16) ‖ offer secret(16)
/// info = label ‖ ctx(12) ‖ tag(4) ‖ psm(2)
/// K_d  = HKDF-SHA256(IKM = K_stream, salt, info, L = 32)
/// ```
///
/// `K_stream` is the account's sub-key labelled `handoff v1 stream`; the request nonce, the epoch context
/// and the tag are those of the continuation exchange that carried the offer. Only devices of the account
/// that saw that exchange can derive them. No key appears in `description` or reflection.
public struct StreamKeys: Sendable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// Seals what the continuing device sends; opens what the origin receives.
    public let continuingToOrigin: StreamDirectionKey
    /// Seals what the origin sends; opens what the continuing device receives.
    public let originToContinuing: StreamDirectionKey

    /// The keys of the stream `offer` made in the continuation exchange of `requestNonce`, for a beacon
    /// with recognition tag `tag` in `epoch`, of `account`.
    /// - Precondition: `tag` has 4 bytes and `requestNonce` 16.
    public init(account: AccountKey, epoch: Epoch, tag: [UInt8], requestNonce: [UInt8], offer: StreamOffer) {
        self.init(
            streamKey: account.schedule.streamKey, context: epoch.context.bytes, tag: tag, requestNonce: requestNonce,
            offer: offer)
    }

    init(streamKey: SecretBytes, context: [UInt8], tag: [UInt8], requestNonce: [UInt8], offer: StreamOffer) {
        precondition(context.count == EpochContext.byteCount, "an epoch context has 12 bytes")
        precondition(tag.count == 4, "a recognition tag has 4 bytes")
        precondition(requestNonce.count == ContinuationFormat.requestNonceLength, "a request nonce has 16 bytes")
        let salt = offer.secret.withUnsafeBytes { requestNonce + $0 }
        let binding = context + tag + [UInt8(offer.psm >> 8), UInt8(truncatingIfNeeded: offer.psm)]
        func derive(_ direction: StreamDirection) -> StreamDirectionKey {
            let key = streamKey.withUnsafeBytes { ikm in
                HKDF<SHA256>.deriveKey(
                    inputKeyMaterial: SymmetricKey(data: ikm), salt: salt, info: direction.label + binding,
                    outputByteCount: 32)
            }
            return StreamDirectionKey(direction: direction, bytes: key.withUnsafeBytes { SecretBytes($0) })
        }
        continuingToOrigin = derive(.continuingToOrigin)
        originToContinuing = derive(.originToContinuing)
    }

    /// The key of `direction`.
    public func key(for direction: StreamDirection) -> StreamDirectionKey {
        switch direction {
        case .continuingToOrigin: continuingToOrigin
        case .originToContinuing: originToContinuing
        }
    }

    /// The sealer of what `role` sends.
    public func sealer(for role: StreamRole) -> StreamSealer { StreamSealer(key: key(for: role.outgoing)) }

    /// The opener of what `role` receives.
    public func opener(for role: StreamRole) -> StreamOpener { StreamOpener(key: key(for: role.incoming)) }

    /// `StreamKeys(…)`: never a key.
    public var description: String { "StreamKeys(\(continuingToOrigin.direction), \(originToContinuing.direction))" }
    /// Same as `description`: never a key.
    public var debugDescription: String { description }
    /// Shows no key to `dump` and debuggers.
    public var customMirror: Mirror { Mirror(self, children: [], displayStyle: .struct) }
}
