/// Hand-built management packets, byte by byte from BlueZ doc/mgmt-api.txt
/// ("Read Controller Information Command", "Command Complete Event",
/// "Command Status Event"), for tests.
enum ManagementVectors {
    /// The return parameters of Read Controller Information for a controller
    /// 00:1A:7D:DA:71:13, Bluetooth 5.0 (9), manufacturer 2 (Intel), class
    /// 0x0C010C, named "alice-laptop" / "alice", with `current` settings.
    static func controllerInformation(current: UInt32 = 0x0000_2211, supported: UInt32 = 0x0001_FEFF) -> [UInt8] {
        var bytes: [UInt8] = [0x13, 0x71, 0xDA, 0x7D, 0x1A, 0x00]  // address, least significant octet first
        bytes += [0x09]  // Bluetooth version
        bytes += [0x02, 0x00]  // manufacturer
        bytes += littleEndian(supported)
        bytes += littleEndian(current)
        bytes += [0x0C, 0x01, 0x0C]  // class of device
        bytes += padded(Array("alice-laptop".utf8), to: 249)
        bytes += padded(Array("alice".utf8), to: 11)
        return bytes
    }

    /// A Command Complete event (0x0001) for `opcode` on controller `index`.
    static func commandComplete(opcode: UInt16, index: UInt16, status: UInt8 = 0, parameters: [UInt8]) -> [UInt8] {
        event(code: 0x0001, index: index, parameters: littleEndian16(opcode) + [status] + parameters)
    }

    /// A Command Status event (0x0002).
    static func commandStatus(opcode: UInt16, index: UInt16, status: UInt8) -> [UInt8] {
        event(code: 0x0002, index: index, parameters: littleEndian16(opcode) + [status])
    }

    /// New Settings (0x0006), which the kernel sends to every listener.
    static func newSettings(index: UInt16, settings: UInt32) -> [UInt8] {
        event(code: 0x0006, index: index, parameters: littleEndian(settings))
    }

    static func event(code: UInt16, index: UInt16, parameters: [UInt8]) -> [UInt8] {
        littleEndian16(code) + littleEndian16(index) + littleEndian16(UInt16(parameters.count)) + parameters
    }

    static func littleEndian(_ value: UInt32) -> [UInt8] {
        [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16 & 0xFF), UInt8(value >> 24)]
    }

    static func littleEndian16(_ value: UInt16) -> [UInt8] { [UInt8(value & 0xFF), UInt8(value >> 8)] }

    static func padded(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes + [UInt8](repeating: 0, count: length - bytes.count)
    }
}
