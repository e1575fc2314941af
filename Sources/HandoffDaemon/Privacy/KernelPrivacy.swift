import BluetoothManagement

/// What the kernel said about LE privacy on the adapter in use (MGMT Read
/// Controller Information, bit 13 of its settings), or why it could not be asked.
public enum KernelPrivacy: Sendable, Equatable {
    case known(ControllerInformation.Privacy)
    /// The kernel could not be asked: no Bluetooth in the kernel, a time-out, …
    case unknown(String)

    /// Asks the kernel about adapter `interfaceName` (`hci0`).
    public static func read(interfaceName: String, timeout: Duration = .seconds(1)) async -> KernelPrivacy {
        guard let index = ControllerIndex.of(interfaceName: interfaceName) else {
            return .unknown("\(interfaceName) is not a kernel controller name (hciN)")
        }
        do {
            return .known(try await ManagementChannel.readControllerInformation(index: index, timeout: timeout).privacy)
        } catch {
            return .unknown(error.description)
        }
    }
}
