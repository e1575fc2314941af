/// Stateless sealing and opening of a beacon with explicit fields.
///
/// `BeaconEncoder` and `BeaconRecognizer` are what the daemon uses; this is
/// the deterministic core they share, exposed for test vectors and tools.
/// Opening here checks one account and one epoch by trying its 8 tags, with
/// no replay state.
public enum BeaconCodec {
    /// The 24-byte payload carrying `fields` for `account`.
    public static func seal(_ fields: BeaconFields, account: AccountKey) -> [UInt8] {
        let keys = EpochKeys(schedule: account.schedule, epoch: fields.epoch)
        return BeaconCrypto.seal(fields, keys: keys, macKey: account.schedule.authenticationKey)
    }

    /// Opens `payload` as a beacon of `account` made for exactly `epoch`.
    /// - Throws: `BeaconRejection.tooShort`, `.tooLong`, `.unsupportedVersion`,
    ///   `.unknownTag` (no slot's tag matches) or `.authenticationFailed`.
    public static func open(
        _ payload: some Collection<UInt8>, account: AccountKey, epoch: Epoch
    ) throws(BeaconRejection) -> BeaconFields {
        let bytes = Array(payload)
        guard let header = bytes.first else { throw .tooShort(length: 0) }
        guard header >> 4 == BeaconFormat.version else { throw .unsupportedVersion(header >> 4) }
        guard bytes.count >= BeaconFormat.payloadLength else { throw .tooShort(length: bytes.count) }
        guard bytes.count <= BeaconFormat.payloadLength else { throw .tooLong(length: bytes.count) }
        let keys = EpochKeys(schedule: account.schedule, epoch: epoch)
        let tag = UInt32(bytes[1]) << 24 | UInt32(bytes[2]) << 16 | UInt32(bytes[3]) << 8 | UInt32(bytes[4])
        guard let slot = keys.tags.firstIndex(of: tag) else { throw .unknownTag }
        let fields = bytes.withUnsafeBytes { buffer in
            BeaconCrypto.open(
                buffer.baseAddress!, cipher: keys.cipher, slot: UInt8(slot), macKey: account.schedule.authenticationKey
            )
        }
        guard let fields else { throw .authenticationFailed }
        return fields
    }
}
