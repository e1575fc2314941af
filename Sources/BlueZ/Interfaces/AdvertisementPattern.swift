import DBus

/// One entry of an `or_patterns` advertisement monitor's `Patterns`
/// (`(yyay)`, org.bluez.AdvertisementMonitor(5)): an advertisement matches when
/// one of its AD structures of type `adType` holds `content` at byte
/// `start` of its data. A monitor matches when any of its patterns does.
public struct AdvertisementPattern: Sendable, Hashable {
    /// AD type of Manufacturer Specific Data.
    public static let manufacturerData: UInt8 = 0xFF
    /// The longest content BlueZ takes (and an AD structure's data can hold).
    public static let maximumLength = 31

    /// Where in the AD structure's data (after length and type) the content starts.
    public var start: UInt8
    public var adType: UInt8
    public var content: [UInt8]

    public init(start: UInt8 = 0, adType: UInt8, content: [UInt8]) {
        self.start = start
        self.adType = adType
        self.content = content
    }

    /// Fits BlueZ's bounds: 1…31 content bytes that end within 31 bytes of data.
    public var isValid: Bool {
        !content.isEmpty && Int(start) + content.count <= Self.maximumLength
    }

    /// The `(yyay)` value.
    public var value: DBusValue {
        .structure([.byte(start), .byte(adType), .bytes(content)])
    }

    /// The patterns for Manufacturer Specific Data of `companyID` whose first
    /// payload byte has `highNibble` as its high nibble: one pattern per
    /// possible low nibble (16), since a pattern compares whole bytes.
    /// `highNibble` nil: one pattern on the company ID alone.
    public static func manufacturer(_ companyID: UInt16, highNibble: UInt8?) -> [AdvertisementPattern] {
        guard let highNibble else { return [AdvertisementPattern(adType: manufacturerData, content: companyBytes(companyID))] }
        return (0..<16).map { low in manufacturer(companyID, firstByte: (highNibble & 0x0F) << 4 | UInt8(low)) }
    }

    /// The pattern for Manufacturer Specific Data of `companyID` whose first payload byte is `firstByte`.
    public static func manufacturer(_ companyID: UInt16, firstByte: UInt8) -> AdvertisementPattern {
        AdvertisementPattern(adType: manufacturerData, content: companyBytes(companyID) + [firstByte])
    }

    /// The company ID as it is on the air: little-endian.
    static func companyBytes(_ companyID: UInt16) -> [UInt8] { [UInt8(companyID & 0xFF), UInt8(companyID >> 8)] }
}
