import DBus

/// A Bluetooth device address, written most significant byte first
/// (`"3A:1B:…"`), as BlueZ shows it.
struct DeviceAddress: Hashable, Sendable, CustomStringConvertible {
    /// The six bytes, most significant first.
    let bytes: [UInt8]

    init(_ bytes: [UInt8]) {
        precondition(bytes.count == 6)
        self.bytes = bytes
    }

    /// The stable public address of simulated adapter `hciN`.
    static func adapter(index: Int) -> DeviceAddress {
        DeviceAddress([0x00, 0xAA, 0x01, UInt8((index >> 8) & 0xFF), 0x00, UInt8(0x10 &+ UInt8(index & 0xFF))])
    }

    /// A fresh non-resolvable private address (top two bits 00), what the kernel
    /// uses for an advertising set when privacy is off.
    static func randomNonResolvable(using generator: inout some RandomNumberGenerator) -> DeviceAddress {
        var bytes = (0..<6).map { _ in UInt8.random(in: 0...255, using: &generator) }
        bytes[0] &= 0x3F
        if bytes.allSatisfy({ $0 == 0 }) { bytes[5] = 1 }
        return DeviceAddress(bytes)
    }

    /// `AA:BB:CC:DD:EE:FF`.
    var description: String { bytes.map(Self.hexByte).joined(separator: ":") }

    /// `AA-BB-CC-DD-EE-FF`, bluetoothd's Alias for a device without a name.
    var dashed: String { bytes.map(Self.hexByte).joined(separator: "-") }

    /// The Device1 object path element, `dev_AA_BB_CC_DD_EE_FF`.
    var pathElement: String { "dev_" + bytes.map(Self.hexByte).joined(separator: "_") }

    static func hexByte(_ byte: UInt8) -> String {
        let digits = Array("0123456789ABCDEF")
        return String([digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
    }
}
