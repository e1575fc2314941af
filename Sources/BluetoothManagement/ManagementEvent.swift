/// The events the management channel sends that matter to a command: its
/// completion (Command Complete, 0x0001) or its failure without return
/// parameters (Command Status, 0x0002). Everything else (a controller added,
/// a setting changed, …) is `other`.
public enum ManagementEvent: Sendable, Equatable {
    /// Command Complete: the command's opcode, its status, its return parameters.
    case commandComplete(opcode: UInt16, status: ManagementStatus, returnParameters: [UInt8])
    /// Command Status: the command's opcode and its status (the kernel sends
    /// failures such as Invalid Index this way).
    case commandStatus(opcode: UInt16, status: ManagementStatus)
    /// Any other event, by code.
    case other(code: UInt16)

    public static let commandCompleteCode: UInt16 = 0x0001
    public static let commandStatusCode: UInt16 = 0x0002

    /// Reads the event in `packet`.
    public init(_ packet: ManagementPacket) throws(ManagementError) {
        let parameters = packet.parameters
        switch packet.code {
        case Self.commandCompleteCode, Self.commandStatusCode:
            guard parameters.count >= 3 else {
                throw .malformed("a command event with \(parameters.count) parameter bytes (at least 3 expected)")
            }
            let opcode = parameters.littleEndianUInt16(at: 0)
            let status = ManagementStatus(rawValue: parameters[2])
            if packet.code == Self.commandCompleteCode {
                self = .commandComplete(opcode: opcode, status: status, returnParameters: Array(parameters[3...]))
            } else {
                self = .commandStatus(opcode: opcode, status: status)
            }
        default:
            self = .other(code: packet.code)
        }
    }
}
