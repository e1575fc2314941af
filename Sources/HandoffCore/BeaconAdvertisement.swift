/// The legacy (31-byte) BLE advertising data that carries a beacon:
/// a Flags structure and one Manufacturer Specific Data structure.
///
/// BlueZ builds this itself from `ManufacturerData {companyID: payload}`;
/// this type exists to document and test the byte budget.
public enum BeaconAdvertisement {
    /// Maximum length of legacy advertising data.
    public static let maximumLength = 31
    /// Flags AD structure: length 2, type 0x01, LE General Discoverable | BR/EDR Not Supported.
    public static let flagsStructure: [UInt8] = [0x02, 0x01, 0x06]
    /// AD type of Manufacturer Specific Data.
    public static let manufacturerDataType: UInt8 = 0xFF

    /// Flags, then `[length, 0xFF, companyID (little-endian), payload…]`.
    /// For a 24-byte beacon this is exactly 31 bytes.
    public static func advertisingData(payload: [UInt8], companyID: UInt16) -> [UInt8] {
        precondition(payload.count <= maximumLength - flagsStructure.count - 4, "payload too long for legacy advertising")
        return flagsStructure + [
            UInt8(payload.count + 3), manufacturerDataType,
            UInt8(truncatingIfNeeded: companyID), UInt8(truncatingIfNeeded: companyID >> 8),
        ] + payload
    }

    /// The manufacturer payload for `companyID` in advertising data, or nil.
    /// Walks the AD structures and stops at the first malformed one.
    public static func manufacturerPayload(in advertisingData: [UInt8], companyID: UInt16) -> [UInt8]? {
        var index = 0
        while index < advertisingData.count {
            let length = Int(advertisingData[index])
            guard length > 0, index + 1 + length <= advertisingData.count else { return nil }
            let type = advertisingData[index + 1]
            if type == manufacturerDataType, length >= 3 {
                let id = UInt16(advertisingData[index + 2]) | UInt16(advertisingData[index + 3]) << 8
                if id == companyID { return Array(advertisingData[(index + 4)..<(index + 1 + length)]) }
            }
            index += 1 + length
        }
        return nil
    }
}
