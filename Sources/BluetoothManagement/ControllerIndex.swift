/// The management interface's index of a controller, from its kernel
/// interface name: `hci0` is 0, `hci12` is 12.
public enum ControllerIndex {
    /// The index of `interfaceName`, or nil when it is not `hci` and a decimal number below 0xFFFF.
    public static func of(interfaceName: String) -> UInt16? {
        guard interfaceName.hasPrefix("hci") else { return nil }
        let digits = interfaceName.dropFirst(3)
        guard !digits.isEmpty, digits.allSatisfy(\.isASCII), digits.allSatisfy(\.isNumber),
            let index = UInt16(digits), index != ManagementPacket.noController
        else { return nil }
        return index
    }
}
