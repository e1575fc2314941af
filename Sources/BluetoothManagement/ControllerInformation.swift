/// What the kernel says about one controller: the return parameters of the
/// management command Read Controller Information (opcode 0x0004).
///
/// Layout (BlueZ doc/mgmt-api.txt, little-endian): Address (6), Bluetooth
/// Version (1), Manufacturer (2), Supported Settings (4), Current Settings
/// (4), Class of Device (3), Name (249, NUL-padded), Short Name (11): 280 bytes.
public struct ControllerInformation: Sendable, Equatable {
    /// The opcode of Read Controller Information.
    public static let opcode: UInt16 = 0x0004
    /// The length of its return parameters.
    public static let length = 280

    /// The controller's public (identity) address, `AA:BB:CC:DD:EE:FF`.
    public var address: String
    /// The Bluetooth Core version number the controller reports (9 is 5.0).
    public var version: UInt8
    /// The controller's manufacturer, a company identifier.
    public var manufacturer: UInt16
    /// What the controller can do.
    public var supportedSettings: ControllerSettings
    /// What is on now. `.privacy` here is the truth about LE address privacy.
    public var currentSettings: ControllerSettings
    /// The Class of Device, 24 bits.
    public var classOfDevice: UInt32
    public var name: String
    public var shortName: String

    public init(
        address: String, version: UInt8, manufacturer: UInt16, supportedSettings: ControllerSettings,
        currentSettings: ControllerSettings, classOfDevice: UInt32, name: String, shortName: String
    ) {
        self.address = address
        self.version = version
        self.manufacturer = manufacturer
        self.supportedSettings = supportedSettings
        self.currentSettings = currentSettings
        self.classOfDevice = classOfDevice
        self.name = name
        self.shortName = shortName
    }

    /// The command that asks for controller `index` (`hci0` is 0).
    public static func request(index: UInt16) -> ManagementPacket {
        ManagementPacket(code: opcode, index: index)
    }

    /// Parses the return parameters of a successful Read Controller Information.
    public init(returnParameters bytes: [UInt8]) throws(ManagementError) {
        guard bytes.count >= Self.length else {
            throw .malformed("Read Controller Information returned \(bytes.count) bytes, \(Self.length) expected")
        }
        address = bytes[0..<6].reversed().map(Self.hex).joined(separator: ":")
        version = bytes[6]
        manufacturer = bytes.littleEndianUInt16(at: 7)
        supportedSettings = ControllerSettings(rawValue: bytes.littleEndianUInt32(at: 9))
        currentSettings = ControllerSettings(rawValue: bytes.littleEndianUInt32(at: 13))
        classOfDevice = UInt32(bytes[17]) | UInt32(bytes[18]) << 8 | UInt32(bytes[19]) << 16
        name = Self.string(bytes[20..<269])
        shortName = Self.string(bytes[269..<280])
    }

    /// LE privacy as the kernel has it for this controller.
    public var privacy: Privacy {
        if currentSettings.contains(.privacy) { return .on }
        return supportedSettings.contains(.privacy) ? .off : .unsupported
    }

    /// The state of the Privacy setting.
    public enum Privacy: String, Sendable, Equatable {
        case on, off
        /// The controller cannot do LE privacy (no LE, or the kernel lacks it).
        case unsupported
    }

    private static func hex(_ byte: UInt8) -> String {
        let digits = String(byte, radix: 16, uppercase: true)
        return digits.count == 1 ? "0" + digits : digits
    }

    /// A NUL-terminated UTF-8 field; invalid bytes are replaced.
    private static func string(_ field: ArraySlice<UInt8>) -> String {
        String(decoding: field.prefix { $0 != 0 }, as: UTF8.self)
    }
}
