import BlueZ
import HandoffCore

/// Which devices handoffd's BlueZ mirror holds in full: those whose
/// ManufacturerData carries a handoff beacon, by its shape (under the
/// configured company ID, the format's length and version), whoever's it is.
/// The rest, strangers' devices, are held compact (`BlueZObjectManager.start`).
enum BeaconCarriers {
    static func predicate(companyID: UInt16) -> @Sendable (ManufacturerData) -> Bool {
        { data in
            guard let bytes = data[companyID] else { return false }
            return bytes.count == BeaconFormat.payloadLength && BeaconFormat.version(of: bytes) == BeaconFormat.version
        }
    }
}
