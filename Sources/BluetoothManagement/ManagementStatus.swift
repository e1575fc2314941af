/// The status of a management command, as its Command Complete or Command
/// Status event reports it (BlueZ doc/mgmt-api.txt lists the codes).
public struct ManagementStatus: RawRepresentable, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt8
    public init(rawValue: UInt8) { self.rawValue = rawValue }

    public static let success = ManagementStatus(rawValue: 0x00)
    public static let unknownCommand = ManagementStatus(rawValue: 0x01)
    public static let failed = ManagementStatus(rawValue: 0x03)
    public static let busy = ManagementStatus(rawValue: 0x0A)
    public static let rejected = ManagementStatus(rawValue: 0x0B)
    public static let notSupported = ManagementStatus(rawValue: 0x0C)
    public static let invalidParameters = ManagementStatus(rawValue: 0x0D)
    public static let notPowered = ManagementStatus(rawValue: 0x0F)
    public static let invalidIndex = ManagementStatus(rawValue: 0x11)
    public static let permissionDenied = ManagementStatus(rawValue: 0x14)

    public var description: String {
        let name: String? =
            switch self {
            case .success: "Success"
            case .unknownCommand: "Unknown Command"
            case .failed: "Failed"
            case .busy: "Busy"
            case .rejected: "Rejected"
            case .notSupported: "Not Supported"
            case .invalidParameters: "Invalid Parameters"
            case .notPowered: "Not Powered"
            case .invalidIndex: "Invalid Index"
            case .permissionDenied: "Permission Denied"
            default: nil
            }
        let code = "0x" + (rawValue < 0x10 ? "0" : "") + String(rawValue, radix: 16)
        return name.map { "\($0) (\(code))" } ?? "status \(code)"
    }
}
