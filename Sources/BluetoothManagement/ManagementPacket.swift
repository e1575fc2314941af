/// One packet on the kernel's Bluetooth management channel: a 6-byte header
/// (code, controller index, parameter length, each little-endian) and the
/// parameters.
///
/// Commands carry an opcode in `code`, events an event code. The index names
/// the controller (`hci0` is 0), or `ManagementPacket.noController` for
/// commands about the whole subsystem. See BlueZ's doc/mgmt-api.txt,
/// "Packet Structures".
public struct ManagementPacket: Sendable, Equatable {
    /// The index of commands and events that concern no controller (MGMT_INDEX_NONE).
    public static let noController: UInt16 = 0xFFFF
    /// The header's length in bytes.
    public static let headerLength = 6

    public var code: UInt16
    public var index: UInt16
    public var parameters: [UInt8]

    public init(code: UInt16, index: UInt16, parameters: [UInt8] = []) {
        self.code = code
        self.index = index
        self.parameters = parameters
    }

    /// The packet as sent on the socket.
    public var bytes: [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Self.headerLength + parameters.count)
        bytes.appendLittleEndian(code)
        bytes.appendLittleEndian(index)
        bytes.appendLittleEndian(UInt16(parameters.count))
        bytes += parameters
        return bytes
    }

    /// Parses one packet as read from the socket (one read returns one packet).
    public init(bytes: some Collection<UInt8>) throws(ManagementError) {
        let bytes = Array(bytes)
        guard bytes.count >= Self.headerLength else {
            throw .malformed("a packet of \(bytes.count) bytes is shorter than the 6-byte header")
        }
        code = bytes.littleEndianUInt16(at: 0)
        index = bytes.littleEndianUInt16(at: 2)
        let length = Int(bytes.littleEndianUInt16(at: 4))
        guard bytes.count - Self.headerLength == length else {
            throw .malformed("the header announces \(length) parameter bytes, the packet has \(bytes.count - Self.headerLength)")
        }
        parameters = Array(bytes[Self.headerLength...])
    }
}

extension [UInt8] {
    mutating func appendLittleEndian(_ value: UInt16) {
        append(UInt8(truncatingIfNeeded: value))
        append(UInt8(truncatingIfNeeded: value >> 8))
    }

    func littleEndianUInt16(at offset: Int) -> UInt16 {
        UInt16(self[offset]) | UInt16(self[offset + 1]) << 8
    }

    func littleEndianUInt32(at offset: Int) -> UInt32 {
        (0..<4).reduce(UInt32(0)) { value, byte in value | UInt32(self[offset + byte]) << (8 * byte) }
    }
}
