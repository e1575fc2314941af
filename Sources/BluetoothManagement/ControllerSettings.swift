/// A controller's settings as the management interface reports them
/// (Supported_Settings and Current_Settings of Read Controller Information;
/// the bit numbers are BlueZ doc/mgmt-api.txt's).
public struct ControllerSettings: OptionSet, Sendable, Hashable, CustomStringConvertible {
    public var rawValue: UInt32
    public init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Bit 0: the controller is switched on.
    public static let powered = ControllerSettings(rawValue: 1 << 0)
    public static let connectable = ControllerSettings(rawValue: 1 << 1)
    public static let discoverable = ControllerSettings(rawValue: 1 << 3)
    public static let bondable = ControllerSettings(rawValue: 1 << 4)
    /// Bit 7: Bluetooth Classic.
    public static let bredr = ControllerSettings(rawValue: 1 << 7)
    /// Bit 9: Low Energy.
    public static let lowEnergy = ControllerSettings(rawValue: 1 << 9)
    /// Bit 10: the global Set Advertising setting (bluetoothd's advertisements
    /// are instances and do not set it).
    public static let advertising = ControllerSettings(rawValue: 1 << 10)
    /// Bit 13: LE privacy: the kernel advertises and connects from resolvable
    /// private addresses instead of the identity address.
    public static let privacy = ControllerSettings(rawValue: 1 << 13)
    public static let staticAddress = ControllerSettings(rawValue: 1 << 15)

    private static let names: [(ControllerSettings, String)] = [
        (.powered, "powered"), (.connectable, "connectable"), (.discoverable, "discoverable"),
        (.bondable, "bondable"), (.bredr, "br/edr"), (.lowEnergy, "le"), (.advertising, "advertising"),
        (.privacy, "privacy"), (.staticAddress, "static-address"),
    ]

    /// The named settings that are set, such as `powered le privacy`.
    public var description: String {
        let named = Self.names.filter { contains($0.0) }.map(\.1)
        return named.isEmpty ? "none" : named.joined(separator: " ")
    }
}
